/*-------------------------------------------------------------------------
 *
 * legacy.c
 *	  The C entry points of version 0.1.0, under the names its SQL gave them.
 *
 * Floor: entry.  Calls only the SQL-callable functions of the files below it,
 * through their ddl_notify_ names; nothing calls into it but fmgr.
 *
 * Every C function of this library that SQL can call is named ddl_notify_*
 * (the library shares a backend's symbol namespace with every other library
 * loaded there).  0.1.0's install script, which never changes once released,
 * bound nine functions to unprefixed symbols.  They are kept here, each a
 * call of its prefixed successor and nothing else, because:
 * - a database still at 0.1.0 keeps working after the library is upgraded
 *	 and until ALTER EXTENSION ddl_notify UPDATE runs; without them its event
 *	 triggers would fail every DDL of that database, the UPDATE itself
 *	 included;
 * - CREATE EXTENSION ddl_notify VERSION '0.1.0' followed by an update, and
 *	 pg_upgrade of a cluster at 0.1.0, must still work (G13).
 * The update script rebinds all nine to the prefixed names, so after it
 * nothing calls these.  test/t/040_extension_update.pl reaches each of them
 * at 0.1.0 and checks that no function of the updated or fresh extension
 * names one; test/t/009_symbols.pl checks that these nine are the only
 * exported symbols without the project's prefix.  They go when 0.1.0 stops
 * being a version one may update from.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

/*
 * LEGACY_ENTRY(old): the symbol `old`, as 0.1.0's SQL names it, calling
 * ddl_notify_`old` with the very same call information (arguments, result
 * flags, the function's cache slot).
 */
#define LEGACY_ENTRY(old) \
	extern PGDLLEXPORT Datum ddl_notify_##old(PG_FUNCTION_ARGS); \
	PG_FUNCTION_INFO_V1(old); \
	Datum \
	old(PG_FUNCTION_ARGS) \
	{ \
		return ddl_notify_##old(fcinfo); \
	}

LEGACY_ENTRY(capture_ddl_command_end)
LEGACY_ENTRY(capture_sql_drop)
LEGACY_ENTRY(capture_table_rewrite)
LEGACY_ENTRY(subscribe)
LEGACY_ENTRY(unsubscribe)
LEGACY_ENTRY(skip)
LEGACY_ENTRY(deliver)
LEGACY_ENTRY(wait_for_delivery)
LEGACY_ENTRY(delivery_status)
