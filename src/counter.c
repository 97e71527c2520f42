/*-------------------------------------------------------------------------
 *
 * counter.c
 *	  Durable counters for event ids and commit positions, drawn from the
 *	  extension's own sequences without touching the session's lastval().
 *
 * PostgreSQL's nextval_internal() always makes the sequence it advanced the
 * session's "last used" one, which lastval() then reports (and checks the
 * caller's rights on).  Capture draws numbers inside the user's own
 * transaction, so with nextval_internal() a user's lastval() after any DDL
 * returned an event id, or failed with "permission denied" (G0).  That
 * state cannot be saved and restored from outside sequence.c, so the numbers
 * are drawn here instead, from the same sequence relations, in the same
 * on-disk and WAL format:
 *
 * Rules kept here:
 * - Only ddl_notify's own sequences: ascending, INCREMENT 1, NO CYCLE (the
 *	 install script creates them so; anything else is refused with an
 *	 error).  MAXVALUE is honoured as nextval() does.  The sequence's CACHE
 *	 is ignored: no number is kept in backend memory, every call reads and
 *	 advances the page.
 * - Durable and monotonic, as nextval(): a number is handed out only once
 *	 the page says so, and the WAL record (XLOG_SEQ_LOG, replayed by
 *	 PostgreSQL's own seq_redo) always states a value at least as high as
 *	 every number handed out.  It logs DDLN_COUNTER_LOG_AHEAD numbers ahead
 *	 and logs again when those are used up or when the page was last logged
 *	 before the latest checkpoint's redo pointer.  After a crash, a restart or
 *	 the promotion of a standby the counter resumes past every number handed
 *	 out (skipping up to DDLN_COUNTER_LOG_AHEAD unused ones), never below.
 *	 A transaction that used a number commits after the WAL record that
 *	 covers it, so its commit flushes that record too.
 * - Not transactional, as nextval(): a rolled-back caller's numbers are
 *	 gone.  The sequence is locked RowExclusiveLock only while the number is
 *	 drawn (nextval() keeps that lock to the end of the transaction, where a
 *	 query listing the transaction's locks would see it: G0); the buffer's
 *	 exclusive lock orders concurrent callers.  ALTER SEQUENCE on the
 *	 extension's sequences is not supported.
 * - The commit_order row of a transaction is written here too
 *	 (DdlnRecordCommitPosition at PRE_COMMIT of a transaction that recorded
 *	 events, called by ddl_notify.c; DdlnInsertCommitPosition for the
 *	 engine's sweep), a position drawn and inserted in one call.
 * - Callers: capture (event ids) and the commit-position writers (the commit
 *	 callback at PRE_COMMIT, the engine's sweep), subscribe() and the restore trigger
 *	 (subscriber.id) and the engine's dead letters (dead_letter.id), always in a read-write
 *	 transaction that writes rows of its own.  The identity columns of the
 *	 extension's tables are therefore filled explicitly (OVERRIDING SYSTEM
 *	 VALUE), never by their defaults, which call nextval().  The last two
 *	 draw above the highest id in use (DdlnCounterNextAbove): a restore's
 *	 setval() may have set their sequence back.  setval() and nextval() on
 *	 these sequences keep
 *	 working and see the numbers drawn here.
 *
 * Floor: ground: called by capture.c, binding.c, deliver.c and
 * ddl_notify.c's commit callback; calls common.c only.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_sequence.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/xid8.h"
#include "utils/syscache.h"

#include "common.h"

/*
 * Numbers logged ahead of the one handed out: one WAL record per this many
 * calls (PostgreSQL's nextval() uses 32, SEQ_LOG_VALS in sequence.c).
 */
#define DDLN_COUNTER_LOG_AHEAD	32

/* The special space of a sequence page (sequence.c's sequence_magic). */
#define DDLN_SEQ_MAGIC			0x1717

/*
 * The next number of sequence "seqrelid", as nextval() would return it,
 * without making it the session's lastval().
 */
int64
DdlnCounterNext(Oid seqrelid)
{
	return DdlnCounterNextAbove(seqrelid, 0);
}

/*
 * Lock sequence "seqrelid" RowExclusiveLock and open it, refusing a relation
 * that is not a sequence or a sequence that does not count up by 1 without
 * cycling.  Sets *maxv to its MAXVALUE.
 */
static Relation
DdlnCounterOpen(Oid seqrelid, int64 *maxv)
{
	Relation	rel;
	HeapTuple	pgstup;
	Form_pg_sequence pgs;
	bool		refuse;

	LockRelationOid(seqrelid, RowExclusiveLock);
	rel = relation_open(seqrelid, NoLock);
	if (rel->rd_rel->relkind != RELKIND_SEQUENCE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a sequence", RelationGetRelationName(rel))));

	pgstup = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seqrelid));
	/* not reached: a sequence (checked above, under its lock) has a pg_sequence row */
	if (!HeapTupleIsValid(pgstup))
		elog(ERROR, "cache lookup failed for sequence %u", seqrelid);
	pgs = (Form_pg_sequence) GETSTRUCT(pgstup);
	*maxv = pgs->seqmax;
	refuse = (pgs->seqincrement != 1 || pgs->seqcycle);
	ReleaseSysCache(pgstup);
	if (refuse)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("sequence \"%s\" of ddl_notify must count up by 1 without cycling",
						RelationGetRelationName(rel)),
				 errhint("Do not alter the extension's sequences.")));
	return rel;
}

/*
 * The number to hand out from the sequence tuple "seq" of "rel", as
 * nextval() would, but above "floor"; *jumped says it was moved past
 * "floor".  Refuses a sequence at its maximum "maxv", as nextval() does.
 */
static int64
DdlnCounterPick(Relation rel, Form_pg_sequence_data seq, int64 maxv, int64 floor,
				bool *jumped)
{
	int64		result;

	/* a sequence never called (or setval(..., false)) starts at last_value */
	if (!seq->is_called)
		result = seq->last_value;
	else if (seq->last_value >= maxv)
		ereport(ERROR,
				(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
				 errmsg("nextval: reached maximum value of sequence \"%s\" (%lld)",
						RelationGetRelationName(rel), (long long) maxv)));
	else
		result = seq->last_value + 1;
	if (result <= floor)
	{
		/* untested: an id in use at the sequence's maximum (a row written by hand) */
		if (floor >= maxv)
			ereport(ERROR,
					(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
					 errmsg("nextval: reached maximum value of sequence \"%s\" (%lld)",
							RelationGetRelationName(rel), (long long) maxv)));
		result = floor + 1;
		*jumped = true;
	}
	return result;
}

/*
 * Advance the sequence tuple "tup" ("seq", on the exclusively locked page of
 * "buf" of "rel") to "result", handed out: in a critical section, writing
 * (when it logs ahead and the sequence is WAL-logged) first the XLOG_SEQ_LOG
 * record stating the tuple as it will be after the numbers logged ahead,
 * then the tuple itself.  "jumped" says "result" was moved past a floor.
 */
static void
DdlnCounterAdvance(Relation rel, Buffer buf, HeapTuple tup, Form_pg_sequence_data seq,
				   int64 result, int64 maxv, bool jumped)
{
	Page		page = BufferGetPage(buf);
	int64		logged = 0;
	int64		log_cnt;
	bool		logit;
	bool		wal;

	/*
	 * Log ahead when the numbers logged last time are used up, on the first
	 * call after setval(..., false), after a jump past "floor" (what was
	 * logged may not cover it), and on the first call after a
	 * checkpoint (replay starts there, and must see a record that covers
	 * what is handed out from now on).
	 */
	logit = (jumped || !seq->is_called || seq->log_cnt < 1 ||
			 PageGetLSN(page) <= GetRedoRecPtr());
	if (logit)
	{
		logged = (maxv - result < DDLN_COUNTER_LOG_AHEAD) ? maxv : result + DDLN_COUNTER_LOG_AHEAD;
		log_cnt = logged - result;
	}
	else
		log_cnt = seq->log_cnt - 1;
	wal = logit && RelationNeedsWAL(rel);

	/* so that this transaction's commit flushes the record (outside the critical section) */
	if (wal)
		(void) GetTopTransactionId();

	START_CRIT_SECTION();

	/* dirty before XLogInsert, as PostgreSQL's sequence code does */
	MarkBufferDirty(buf);
	if (wal)
	{
		xl_seq_rec	xlrec;
		XLogRecPtr	recptr;

		/* the record carries the tuple as it will be after "logged" */
		seq->last_value = logged;
		seq->is_called = true;
		seq->log_cnt = 0;
		DdlnSeqRecSetRelation(xlrec, rel);
		XLogBeginInsert();
		XLogRegisterBuffer(0, buf, REGBUF_WILL_INIT);
		XLogRegisterData((char *) &xlrec, sizeof(xl_seq_rec));
		XLogRegisterData((char *) tup->t_data, tup->t_len);
		recptr = XLogInsert(RM_SEQ_ID, XLOG_SEQ_LOG);
		PageSetLSN(page, recptr);
	}
	seq->last_value = result;
	seq->is_called = true;
	seq->log_cnt = log_cnt;

	END_CRIT_SECTION();
}

/*
 * The same, but above "floor": a sequence set back below numbers in use (a
 * restore's setval() into a database that already has rows) is moved past
 * them, so that an identity drawn here never collides with one in use.
 */
int64
DdlnCounterNextAbove(Oid seqrelid, int64 floor)
{
	Relation	rel;
	int64		maxv;
	Buffer		buf;
	Page		page;
	ItemId		lp;
	HeapTupleData tup;
	Form_pg_sequence_data seq;
	int64		result;
	bool		jumped = false;

	rel = DdlnCounterOpen(seqrelid, &maxv);

	buf = ReadBuffer(rel, 0);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buf);
	/* not reached: only a corrupted sequence page */
	if (((uint32 *) PageGetSpecialPointer(page))[0] != DDLN_SEQ_MAGIC)
		elog(ERROR, "bad magic number in sequence \"%s\"", RelationGetRelationName(rel));
	lp = PageGetItemId(page, FirstOffsetNumber);
	tup.t_data = (HeapTupleHeader) PageGetItem(page, lp);
	tup.t_len = ItemIdGetLength(lp);
	seq = (Form_pg_sequence_data) GETSTRUCT(&tup);

	result = DdlnCounterPick(rel, seq, maxv, floor, &jumped);
	DdlnCounterAdvance(rel, buf, &tup, seq, result, maxv, jumped);

	UnlockReleaseBuffer(buf);
	relation_close(rel, RowExclusiveLock);
	return result;
}

/*
 * The next number of the extension's sequence "seqname" (in schema
 * ddl_notify): for the identity columns the extension fills itself
 * (subscriber.id, dead_letter.id), rarely enough to look the name up.
 */
int64
DdlnCounterNextNamed(const char *seqname, int64 floor)
{
	Oid			relid = get_relname_relid(seqname, DdlnGetRelids(false)->nsp);

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation \"%s.%s\" of extension ddl_notify does not exist",
						DDLN_SCHEMA_NAME, seqname),
				 errhint("Do not drop the extension's objects; DROP EXTENSION and CREATE EXTENSION ddl_notify re-create them.")));
	return DdlnCounterNextAbove(relid, floor);
}

/*
 * PRE_COMMIT (or PRE_PREPARE) of a transaction that recorded events: write
 * its position in commit order, drawn from its sequence now, into
 * ddl_notify.commit_order: one small row per DDL transaction, written like
 * the event rows.
 */
void
DdlnRecordCommitPosition(void)
{
	const DdlnRelids *relids = DdlnGetRelids(true);

	if (relids == NULL)
		return;					/* the extension went away in this transaction */
	DdlnInsertCommitPosition(relids, GetTopFullTransactionId());
}

/*
 * Write transaction "xid"'s position in commit order, drawn now from
 * commit_order_pos_seq (by counter.c, so that no session's lastval() sees
 * it).  The writing transaction has its own xid before the position is
 * drawn: the engine's position floor (fetch.c, DdlnOrderFloor) waits for
 * every transaction that could hold a position below it by its xid.
 */
void
DdlnInsertCommitPosition(const DdlnRelids *relids, FullTransactionId xid)
{
	Relation	rel;
	CatalogIndexState indstate;
	Datum		values[DDLN_CO_NATTS];
	bool		nulls[DDLN_CO_NATTS] = {false, false};
	HeapTuple	tup;

	(void) GetTopTransactionId();
	values[DDLN_CO_XID] = FullTransactionIdGetDatum(xid);
	values[DDLN_CO_POS] = Int64GetDatum(DdlnCounterNext(relids->commit_order_seq));
	rel = table_open(relids->commit_order, RowExclusiveLock);
	tup = heap_form_tuple(RelationGetDescr(rel), values, nulls);
	indstate = CatalogOpenIndexes(rel);
	DdlnInsertUnpublished(rel, indstate, tup);
	CatalogCloseIndexes(indstate);
	heap_freetuple(tup);
	table_close(rel, RowExclusiveLock);
}
