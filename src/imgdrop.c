/*-------------------------------------------------------------------------
 *
 * imgdrop.c
 *	  "before" of dropped relations: read by the object access hook
 *	  (DdlnImageObjectAccess) while each relation is still whole, kept for
 *	  sql_drop, which takes them by OID (DdlnImageTakeDropped).
 *
 * Rules kept here:
 * - "before" of a DROP (cascaded objects included, DROP SCHEMA, DROP
 *	 OWNED, ALTER TABLE ... DROP COLUMN CASCADE) is read by the object
 *	 access hook: PostgreSQL calls it with OAT_DROP right before it deletes
 *	 each object, and deletes what depends on a relation (its indexes,
 *	 constraints, defaults, rules, columns) before the relation.  So at the
 *	 first deletion of anything of a relation, the relation is still whole:
 *	 its image is read then.  This is way (a) of the two ways one could do
 *	 it (images read before the deletions, kept for sql_drop), made exact:
 *	 only relations that are actually dropped (or lose a part) are read,
 *	 with no guess at what a CASCADE will take.  The other way, reading at
 *	 sql_drop through a copy of a catalog snapshot taken before the drop,
 *	 would need ruleutils and the syscache (which use the current catalog
 *	 snapshot) to read through it, on every version: not done.
 * - Only while sql_drop will be told (trackDroppedObjectsNeeded), in a
 *	 database that has ddl_notify, with ddl_notify.capture_changes on, and
 *	 never for an internal deletion.
 * - Dropped images are kept flattened (jsonb) in memory up to work_mem,
 *	 then in a temporary file, with a hash table of OIDs to find them:
 *	 memory per dropped relation is a hash entry, whatever the number of
 *	 relations (DROP SCHEMA of thousands of tables).  sql_drop forgets them
 *	 all at its end (DdlnImageForgetDropped).
 * - Everything kept lives in the transaction's memory; the transaction's
 *	 end forgets it (xact callbacks registered here at first use).  The
 *	 temporary file belongs to the transaction's resource owner and is
 *	 closed by sql_drop, or at PRE_COMMIT when a command's sql_drop did not
 *	 run; a subtransaction's rollback forgets the dropped images it may
 *	 have read.
 *
 * Floor: engine (capture's helper; relimage.h says how the image files
 * call each other): called by capture.c, and by ddl_notify.c (_PG_init
 * installs the hook, DdlnImageInstallHooks), and by the server through the
 * hook; calls relimage.c and common.c.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "commands/event_trigger.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "relimage.h"

/* images of dropped relations, read by the object access hook */
typedef struct DdlnDroppedEnt
{
	Oid			relid;			/* hash key */
	int			len;			/* -1: no image (not a relation of ours) */
	Jsonb	   *mem;			/* in memory, or NULL: in the file */
	int			fileno;
	off_t		offset;
} DdlnDroppedEnt;

static MemoryContext dropped_cxt = NULL;
static HTAB *dropped = NULL;
static BufFile *dropped_file = NULL;
static Size dropped_mem = 0;
static int	dropped_end_fileno = 0;	/* where the next image goes in the file */
static off_t dropped_end_offset = 0;

static object_access_hook_type prev_object_access_hook = NULL;

static bool xact_callback_registered = false;

/* Nothing kept: no context, table or file (each is gone or closed already). */
static void
DdlnImageDroppedReset(void)
{
	dropped_cxt = NULL;
	dropped = NULL;
	dropped_file = NULL;
	dropped_mem = 0;
	dropped_end_fileno = 0;
	dropped_end_offset = 0;
}

/* The transaction's end forgets the images: its memory, its file. */
static void
DdlnImageXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			/* a command whose sql_drop did not run: close the file, no leak warning */
			DdlnImageForgetDropped();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* the context goes with TopTransactionContext, the file with its resource owner */
			DdlnImageDroppedReset();
			break;
		default:
			break;
	}
}

/*
 * A subtransaction rolled back: the images of dropped relations it read are
 * of drops that did not happen; forget them (the file belongs to the
 * transaction's resource owner and is still open).
 */
static void
DdlnImageSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		DdlnImageForgetDropped();
}

static void
DdlnImageRegisterCallback(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(DdlnImageXactCallback, NULL);
		RegisterSubXactCallback(DdlnImageSubXactCallback, NULL);
		xact_callback_registered = true;
	}
}

/* ---------- keeping the images ---------- */


/* Keep the flattened image "jb" of "ent": in memory up to work_mem, then in a file. */
static void
DdlnImageKeepDropped(DdlnDroppedEnt *ent, Jsonb *jb)
{
	ent->len = VARSIZE(jb);
	if (dropped_mem + ent->len <= (Size) work_mem * 1024)
	{
		ent->mem = MemoryContextAlloc(dropped_cxt, ent->len);
		memcpy(ent->mem, jb, ent->len);
		dropped_mem += ent->len;
		return;
	}
	if (dropped_file == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(dropped_cxt);
		ResourceOwner owner = CurrentResourceOwner;

		/* the transaction's, not a subtransaction's: closed by us only */
		CurrentResourceOwner = TopTransactionResourceOwner;
		dropped_file = BufFileCreateTemp(false);
		CurrentResourceOwner = owner;
		MemoryContextSwitchTo(old);
	}
	if (BufFileSeek(dropped_file, dropped_end_fileno, dropped_end_offset, SEEK_SET) != 0)
		/* untested: an I/O error on this backend's own temporary file */
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in the temporary file of ddl_notify's dropped relation images")));
	ent->fileno = dropped_end_fileno;
	ent->offset = dropped_end_offset;
	BufFileWrite(dropped_file, (void *) jb, ent->len);
	BufFileTell(dropped_file, &dropped_end_fileno, &dropped_end_offset);
}

/*
 * The object access hook: at the first deletion of anything of a relation
 * of ours (itself, a column, an index, a constraint, a default, its view
 * rule or row type), read its image, while it is still whole.
 */
static void
DdlnImageObjectAccess(ObjectAccessType access, Oid classId, Oid objectId,
					  int subId, void *arg)
{
	Oid			relid;
	DdlnDroppedEnt *ent;
	bool		found;
	MemoryContext old;
	MemoryContext tmp;
	DdlnImage  *img;

	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (access != OAT_DROP || !ddln_capture_changes || !IsTransactionState())
		return;
	if (arg && (((ObjectAccessDrop *) arg)->dropflags & PERFORM_DELETION_INTERNAL))
		return;
	/* only while sql_drop will be told about it, and this database has ddl_notify */
	if (!trackDroppedObjectsNeeded())
		return;
	relid = DdlnImageRelationOf(classId, objectId);
	if (!OidIsValid(relid))
		return;
	if (dropped && hash_search(dropped, &relid, HASH_FIND, NULL) != NULL)
		return;

	DdlnImageRegisterCallback();
	if (dropped_cxt == NULL)
	{
		HASHCTL		ctl;

		/* once per command: is ddl_notify in this database? */
		if (DdlnGetRelids(true) == NULL)
			return;

		dropped_cxt = AllocSetContextCreate(TopTransactionContext, "ddl_notify dropped images",
											ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(DdlnDroppedEnt);
		ctl.hcxt = dropped_cxt;
		dropped = hash_create("ddl_notify dropped images", 256, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	ent = (DdlnDroppedEnt *) hash_search(dropped, &relid, HASH_ENTER, &found);
	ent->len = -1;
	ent->mem = NULL;

	if (DdlnImageSkipped(relid))
		return;

	tmp = AllocSetContextCreate(CurrentMemoryContext, "ddl_notify image",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	img = DdlnImageRead(relid, NULL, true);
	if (img)
	{
		DdlnJsonbState st = DDLN_JSONB_STATE_INIT;

		DdlnJsonToken(&st, WJB_BEGIN_OBJECT);
		DdlnJsonKey(&st, "before");
		DdlnImgPushImage(&st, img);
		DdlnImageKeepDropped(ent, DdlnJsonbFinish(&st));
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/*
 * {"before": image} of dropped relation "relid", read when its deletion
 * began, or NULL.
 */
Jsonb *
DdlnImageTakeDropped(Oid relid)
{
	DdlnDroppedEnt *ent;
	Jsonb	   *jb;

	if (dropped == NULL)
		return NULL;
	ent = (DdlnDroppedEnt *) hash_search(dropped, &relid, HASH_FIND, NULL);
	if (ent == NULL || ent->len < 0)
		return NULL;
	if (ent->mem)
		return ent->mem;
	jb = palloc(ent->len);
	if (BufFileSeek(dropped_file, ent->fileno, ent->offset, SEEK_SET) != 0 ||
		BufFileRead(dropped_file, jb, ent->len) != (size_t) ent->len)
		/* untested: an I/O error on this backend's own temporary file */
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read the temporary file of ddl_notify's dropped relation images")));
	return jb;
}

/* sql_drop is done with the images of its command. */
void
DdlnImageForgetDropped(void)
{
	if (dropped_file)
		BufFileClose(dropped_file);
	if (dropped_cxt)
		MemoryContextDelete(dropped_cxt);
	DdlnImageDroppedReset();
}

/* _PG_init: install the object access hook */
void
DdlnImageInstallHooks(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = DdlnImageObjectAccess;
}
