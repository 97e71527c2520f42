/*-------------------------------------------------------------------------
 *
 * trust.c
 *	  Who may run what: the one place that decides whether a function may
 *	  be a subscriber's handler, and whether a role may act for a
 *	  subscriber's owner.
 *
 * Every way a function becomes, or stays, a subscriber's handler asks here,
 * and nowhere else is any of it decided:
 *
 * - subscribe() and alter_subscriber() (subscriber.c): the caller named the
 *	 function itself (DDLN_BIND_CHOSEN);
 * - subscriber_restore() (lifecycle.c: a row of a dump) and the engine's
 *	 resolution of a handler by its stored name (lifecycle.c: after
 *	 pg_upgrade, or a restore that did not find the function): nobody chose
 *	 the function this name finds now (DDLN_BIND_BY_NAME);
 * - the engine, right before it calls a handler (deliver.c): whatever the
 *	 subscriber row says (DDLN_BIND_CALL).
 *
 * The checks, in this order:
 *
 * 1. Shape, for every way in: a plain function (not a procedure, aggregate
 *	  or window function), exactly one argument, of the row type of
 *	  ddl_notify.event, returning void, not a set.  So no row of any table
 *	  makes the engine call a function of another shape (a function taking
 *	  "internal" would be handed the event tuple as a pointer).
 * 2. Privileges: the subscriber's owner has USAGE on the function's schema
 *	  and EXECUTE on it, since the handler runs as that owner.
 * 3. Trust, for DDLN_BIND_BY_NAME only: the function's owner already has
 *	  the privileges of the subscriber's owner (the same role, a superuser,
 *	  or a role that inherits the owner's privileges).  Binding such a
 *	  function gives nobody anything: its author could run that code as the
 *	  subscriber's owner anyway.  Any other function that a stored name finds
 *	  is bound only by its owner's or a superuser's explicit choice
 *	  (alter_subscriber(handler => ...), resume()).
 *
 * And the rule for acting on a subscriber (DdlnMayActFor): a role may
 * subscribe for, alter, pause, resume, unsubscribe, skip events of, or
 * restore a row of a subscriber only if it is a superuser or has the
 * privileges of the subscriber's owner.
 *
 * Rules kept here: catalog caches only, no SQL, no writes.  DdlnJudgeHandler
 * returns its verdict instead of raising it, so that the restore trigger and
 * the engine can record it as the subscriber's state;
 * DdlnRaiseVerdict raises it for the API.  The floor: called by the API
 * (subscriber.c), the life-cycle code (lifecycle.c) and the engine
 * (deliver.c); calls only common.c.
 *
 * Floor: engine: called by binding.c, deliver.c, subscriber.c and
 * lifecycle.c; calls common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "compat.h"
#include "common.h"

#define DDLN_HANDLER_HINT	"A handler is a function(ddl_notify.event) returning void."

/* A role's name for a message, or a placeholder when it is gone. */
static const char *
DdlnRoleName(Oid role)
{
	const char *name = GetUserNameFromId(role, true);

	return name ? name : "(dropped role)";
}

static bool
DdlnRefuse(DdlnVerdict *v, int sqlerrcode, char *message, char *detail, char *hint)
{
	v->ok = false;
	v->sqlerrcode = sqlerrcode;
	v->message = message;
	v->detail = detail;
	v->hint = hint;
	return false;
}

/* Check 1: the shape of a handler. */
static bool
DdlnJudgeShape(Form_pg_proc proc, const char *fname, DdlnVerdict *v)
{
	Oid			eventtype = get_rel_type_id(DdlnGetRelids(false)->event);

	if (proc->prokind != PROKIND_FUNCTION)
		return DdlnRefuse(v, ERRCODE_WRONG_OBJECT_TYPE,
						  psprintf("handler %s is not a plain function", fname),
						  psprintf("It is %s.",
								   proc->prokind == PROKIND_PROCEDURE ? "a procedure" :
								   proc->prokind == PROKIND_AGGREGATE ? "an aggregate function" :
								   proc->prokind == PROKIND_WINDOW ? "a window function" :
								   "not a plain function"),
						  pstrdup(DDLN_HANDLER_HINT));
	if (proc->pronargs != 1 || proc->proargtypes.values[0] != eventtype)
		return DdlnRefuse(v, ERRCODE_DATATYPE_MISMATCH,
						  psprintf("handler %s must take exactly one argument of type ddl_notify.event", fname),
						  NULL, pstrdup(DDLN_HANDLER_HINT));
	if (proc->prorettype != VOIDOID || proc->proretset)
		return DdlnRefuse(v, ERRCODE_DATATYPE_MISMATCH,
						  psprintf("handler %s must return void", fname),
						  NULL, pstrdup(DDLN_HANDLER_HINT));
	return true;
}

/* Check 2: the owner may call it. */
static bool
DdlnJudgePrivileges(Oid handler, Form_pg_proc proc, const char *fname,
					Oid owner, DdlnBind how, DdlnVerdict *v)
{
	const char *who = (how == DDLN_BIND_CHOSEN) ? "Subscribing needs" :
		psprintf("The subscriber's owner \"%s\" needs", DdlnRoleName(owner));

	if (DdlnSchemaAclCheck(proc->pronamespace, owner, ACL_USAGE) != ACLCHECK_OK)
		return DdlnRefuse(v, ERRCODE_INSUFFICIENT_PRIVILEGE,
						  psprintf("permission denied for schema %s",
								   get_namespace_name(proc->pronamespace)),
						  psprintf("%s USAGE on the handler's schema.", who), NULL);
	if (DdlnProcAclCheck(handler, owner, ACL_EXECUTE) != ACLCHECK_OK)
		return DdlnRefuse(v, ERRCODE_INSUFFICIENT_PRIVILEGE,
						  how == DDLN_BIND_CHOSEN ?
						  psprintf("permission denied for function %s", fname) :
						  psprintf("role \"%s\" may not execute handler %s",
								   DdlnRoleName(owner), fname),
						  psprintf("%s EXECUTE on the handler.", who), NULL);
	return true;
}

/* Check 3: binding the function by its name gives its author nothing. */
static bool
DdlnJudgeTrust(Form_pg_proc proc, const char *fname, Oid owner, DdlnVerdict *v)
{
	Oid			author = proc->proowner;

	if (author == owner || superuser_arg(author) || has_privs_of_role(author, owner))
		return true;
	return DdlnRefuse(v, ERRCODE_INSUFFICIENT_PRIVILEGE,
					  psprintf("handler %s is not bound by its name: it belongs to role \"%s\", which does not have the privileges of the subscriber's owner \"%s\"",
							   fname, DdlnRoleName(author), DdlnRoleName(owner)),
					  pstrdup("A handler found by its stored name (after a restore or pg_upgrade) is bound only when its owner already has the privileges of the subscriber's owner."),
					  pstrdup("If this is the intended handler, the subscriber's owner or a superuser can bind it with ddl_notify.alter_subscriber(name, handler => ...) or ddl_notify.resume(name)."));
}

/*
 * May "handler" be the handler of a subscriber owned by "owner", bound the
 * way "how" says?  Fills *v and returns v->ok.
 */
bool
DdlnJudgeHandler(Oid handler, Oid owner, DdlnBind how, DdlnVerdict *v)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	char	   *fname;
	bool		ok;

	memset(v, 0, sizeof(*v));
	v->ok = true;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(handler));
	if (!HeapTupleIsValid(tup))
		return DdlnRefuse(v, ERRCODE_UNDEFINED_FUNCTION,
						  psprintf("function with OID %u does not exist", handler),
						  NULL, NULL);
	proc = (Form_pg_proc) GETSTRUCT(tup);
	fname = format_procedure(handler);

	ok = DdlnJudgeShape(proc, fname, v) &&
		DdlnJudgePrivileges(handler, proc, fname, owner, how, v) &&
		(how != DDLN_BIND_BY_NAME || DdlnJudgeTrust(proc, fname, owner, v));
	ReleaseSysCache(tup);
	return ok;
}

/* Raise a refusal of DdlnJudgeHandler (the API's way). */
void
DdlnRaiseVerdict(const DdlnVerdict *v)
{
	Assert(!v->ok);
	ereport(ERROR,
			(errcode(v->sqlerrcode),
			 errmsg_internal("%s", v->message),
			 v->detail ? errdetail_internal("%s", v->detail) : 0,
			 v->hint ? errhint("%s", v->hint) : 0));
}

/* The verdict as one line, as the engine and the restore record it. */
char *
DdlnVerdictText(const DdlnVerdict *v)
{
	if (v->detail)
		return psprintf("%s (detail: %s)", v->message, v->detail);
	return pstrdup(v->message);
}

/* May "role" act on a subscriber owned by "owner"? */
bool
DdlnMayActFor(Oid role, Oid owner)
{
	return superuser_arg(role) || (OidIsValid(owner) && has_privs_of_role(role, owner));
}

/*
 * Refuse unless the current user may act on subscriber "name" owned by
 * "owner" (InvalidOid: a role that no longer exists, or never did here).
 */
void
DdlnCheckMayActFor(const char *name, Oid owner, const char *owner_name)
{
	if (DdlnMayActFor(GetUserId(), owner))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("must be the owner of subscriber \"%s\"", name),
			 errdetail("Subscriber \"%s\" belongs to role \"%s\".", name,
					   OidIsValid(owner) ? DdlnRoleName(owner) :
					   (owner_name ? owner_name : "?")),
			 errhint("Only its owner, a member of its owner, or a superuser may change it.")));
}
