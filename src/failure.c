/*-------------------------------------------------------------------------
 *
 * failure.c
 *	  A failed handler call as the delivery engine (deliver.c) sees it:
 *	  whose error it is, and the bounded copy of it the engine keeps.
 *
 * Rules kept here:
 * - Whose error is it?  A handler's error is its failure (attempts, backoff,
 *	 dead letters), whatever SQLSTATE it carries: a handler can RAISE
 *	 query_canceled or admin_shutdown.  Only a cancel or shutdown raised by
 *	 ProcessInterrupts() (a real interrupt: the caller cancelled deliver(), a
 *	 statement timeout, the server stops) is the deliverer's, and the engine
 *	 re-throws it to end the round (DdlnErrorIsDeliverers).  The handler
 *	 timeout is a cancel too, but ours: DdlnHandlerTimeoutHandler sets
 *	 ddln_handler_timed_out before it raises the cancel, and such an error
 *	 stays the handler's.  deliver.c registers the timeout, arms it around
 *	 each call and clears the flag.
 * - The timeout ends the call whatever the handler catches (G10).  A cancel
 *	 is an ERROR, and PL/pgSQL can trap any ERROR (EXCEPTION WHEN
 *	 query_canceled, WHEN OTHERS).  So the cancel has a second timeout,
 *	 DdlnHandlerGraceMs() after the first: if the call is still running
 *	 then (ddln_handler_in_call), DdlnHandlerKillHandler asks for the end of
 *	 the process (ProcDiePending), the FATAL a SIGTERM gives, which no
 *	 handler can trap: a pool worker exits and frees its slot, a session
 *	 running CALL ddl_notify.deliver() is disconnected.  deliver.c keeps a
 *	 note of the call it ended (the subscriber and the event), and the next
 *	 deliverer of the database counts it as a failed attempt.  A handler
 *	 that caught the cancel and returned fails as well: a call that ran past
 *	 the timeout is never taken as a success.
 * - Every error the engine keeps is copied with each text cut to
 *	 DDLN_ERROR_FIELD_MAX bytes at a character boundary, with a note of how
 *	 much was cut (DdlnCopyErrorCapped): what the engine records in
 *	 subscriber and dead_letter and what it logs is bounded, whatever a
 *	 handler raised.  The full copy lives only in a scratch context deleted
 *	 before the function returns; the error state is flushed.
 * - Called only by deliver.c, inside a PG_CATCH, and by the timeout
 *	 machinery (the two timeout handlers, in the SIGALRM handler: flags and
 *	 the latch only); calls nothing of the other files: no SPI, no catalog
 *	 access.
 *
 * Floor: engine: called by deliver.c only; calls common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/memutils.h"

#include "common.h"

/*
 * The longest text of an error the engine keeps, records or logs, per field
 * (message, detail, hint, context...); longer ones are cut.
 */
#define DDLN_ERROR_FIELD_MAX	8192

/* set by the handler timeout, cleared by deliver.c */
volatile sig_atomic_t ddln_handler_timed_out = false;

/* a handler call is running: set and cleared by deliver.c around it */
volatile sig_atomic_t ddln_handler_in_call = false;

/* the second timeout ended the process (read by deliver.c's exit callback) */
volatile sig_atomic_t ddln_handler_killed = false;

/*
 * How long a cancelled handler call may take to return before its process
 * is ended: DDLN_HANDLER_GRACE_MAX_MS, or the timeout itself if shorter.  A
 * handler that does not trap the cancel unwinds in milliseconds.
 */
int
DdlnHandlerGraceMs(void)
{
	return Min(ddln_handler_timeout, DDLN_HANDLER_GRACE_MAX_MS);
}

/*
 * The handler timeout (ddl_notify.handler_timeout) fires: a cancel, but
 * ours, so that DdlnErrorIsDeliverers() counts it as the handler's failure.
 */
void
DdlnHandlerTimeoutHandler(void)
{
	ddln_handler_timed_out = true;
	QueryCancelPending = true;
	InterruptPending = true;
	SetLatch(MyLatch);
}

/*
 * The grace after the cancel is over and the call still runs: the handler
 * trapped the cancel.  End the process as SIGTERM would (a FATAL at the
 * next CHECK_FOR_INTERRUPTS, which PL/pgSQL cannot trap).  Runs in the
 * SIGALRM handler: flags and the latch only.
 */
void
DdlnHandlerKillHandler(void)
{
	if (!ddln_handler_in_call || !ddln_handler_timed_out)
		return;
	ddln_handler_killed = true;
	ProcDiePending = true;
	InterruptPending = true;
	SetLatch(MyLatch);
}

/*
 * Is this error one that belongs to the whole delivery (the user cancelled
 * CALL deliver(), the server shuts down) rather than to the handler?
 *
 * Not decided by the SQLSTATE alone: a handler can RAISE any SQLSTATE it
 * likes, query_canceled and admin_shutdown included, and an error it raises
 * is its own failure (attempts, backoff, dead letters) like any other.  A
 * real cancel, statement timeout or shutdown is raised by
 * ProcessInterrupts() when it services the interrupt flags (a shutdown is
 * FATAL and never reaches a PG_CATCH at all); the handler timeout is a
 * cancel too, but ours, and counts as the handler's failure.
 */
bool
DdlnErrorIsDeliverers(ErrorData *edata)
{
	if (edata->sqlerrcode != ERRCODE_QUERY_CANCELED &&
		edata->sqlerrcode != ERRCODE_ADMIN_SHUTDOWN &&
		edata->sqlerrcode != ERRCODE_CRASH_SHUTDOWN)
		return false;
	if (ddln_handler_timed_out)
		return false;
	return edata->funcname != NULL &&
		strcmp(edata->funcname, "ProcessInterrupts") == 0;
}

/*
 * A copy of s in the current memory context, at most "max" bytes of it (cut
 * at a character boundary) followed by a note of how much was cut.
 */
static char *
DdlnCapText(const char *s, int max)
{
	size_t		len;
	int			keep;

	if (s == NULL)
		return NULL;
	len = strlen(s);
	if (len <= (size_t) max)
		return pstrdup(s);
	keep = pg_mbcliplen(s, max, max);
	return psprintf("%.*s... [%zu bytes cut by ddl_notify]", keep, s, len - keep);
}

/*
 * The error being handled (in a PG_CATCH), copied into "into" with each of
 * its texts capped at DDLN_ERROR_FIELD_MAX bytes, and the error state
 * flushed.  A handler can raise an error of any size (RAISE ... USING
 * MESSAGE = repeat('m', 500000000)): the full copy lives only in a scratch
 * context, deleted at once, so that nothing the engine keeps, records
 * (subscriber, dead_letter) or logs is larger than the cap.
 */
ErrorData *
DdlnCopyErrorCapped(MemoryContext into)
{
	MemoryContext scratch;
	ErrorData  *full;
	ErrorData  *e;

	scratch = AllocSetContextCreate(into, "ddl_notify error copy",
									ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(scratch);
	full = CopyErrorData();
	FlushErrorState();
	MemoryContextSwitchTo(into);

	e = palloc(sizeof(ErrorData));
	memcpy(e, full, sizeof(ErrorData));
	e->message = DdlnCapText(full->message, DDLN_ERROR_FIELD_MAX);
	e->detail = DdlnCapText(full->detail, DDLN_ERROR_FIELD_MAX);
	e->detail_log = DdlnCapText(full->detail_log, DDLN_ERROR_FIELD_MAX);
	e->hint = DdlnCapText(full->hint, DDLN_ERROR_FIELD_MAX);
	e->context = DdlnCapText(full->context, DDLN_ERROR_FIELD_MAX);
	e->backtrace = DdlnCapText(full->backtrace, DDLN_ERROR_FIELD_MAX);
	e->schema_name = DdlnCapText(full->schema_name, DDLN_ERROR_FIELD_MAX);
	e->table_name = DdlnCapText(full->table_name, DDLN_ERROR_FIELD_MAX);
	e->column_name = DdlnCapText(full->column_name, DDLN_ERROR_FIELD_MAX);
	e->datatype_name = DdlnCapText(full->datatype_name, DDLN_ERROR_FIELD_MAX);
	e->constraint_name = DdlnCapText(full->constraint_name, DDLN_ERROR_FIELD_MAX);
	e->internalquery = DdlnCapText(full->internalquery, DDLN_ERROR_FIELD_MAX);
	e->filename = full->filename ? pstrdup(full->filename) : NULL;
	e->funcname = full->funcname ? pstrdup(full->funcname) : NULL;
	MemoryContextDelete(scratch);
	return e;
}
