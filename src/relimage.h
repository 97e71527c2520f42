/*-------------------------------------------------------------------------
 *
 * relimage.h
 *	  The image files' own words, shared by them alone: an image as read
 *	  from the catalogs (relimage.c), before it is written as jsonb.
 *
 *	  relimage.c	reads an object into an image and writes an image as
 *					jsonb: relations (of every kind with images), sequences,
 *					and the "after" of domains and enums
 *	  imgdiff.c		the changes between two images, and the details
 *					{"before", "after", "changes"} of a row
 *	  imgcommand.c	which images a command's rows carry: "before" read at
 *					ddl_command_start, "after" at ddl_command_end
 *	  imgdrop.c		"before" of dropped relations: the object access hook,
 *					and the images kept for sql_drop (memory, then a file)
 *
 * Calls among them run one way: imgcommand.c -> imgdiff.c -> relimage.c,
 * imgdrop.c -> relimage.c.  All four are on the engine floor (capture's
 * helpers, common.h) and call common.c below them.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDLN_RELIMAGE_H
#define DDLN_RELIMAGE_H

#include "nodes/pg_list.h"
#include "utils/jsonb.h"

#include "common.h"

typedef struct DdlnImgColumn
{
	char	   *name;
	int			attnum;
	char	   *type;
	char	   *collation;		/* NULL: the type's */
	bool		not_null;
	char	   *not_null_name;	/* its NOT NULL constraint's name (18 on),
								 * else NULL */
	bool		not_null_named; /* and that is not PostgreSQL's default
								 * name for it (the image shows it then) */
	bool		not_null_no_inherit;	/* and it is NO INHERIT */
	bool		not_null_not_valid; /* and NOT VALID (18 on) */
	char	   *def;			/* default expression, or NULL */
	char		identity;		/* '\0', ATTRIBUTE_IDENTITY_ALWAYS or _BY_DEFAULT */
	char	   *generated;		/* generated expression, or NULL */
	bool		is_virtual;		/* and it is VIRTUAL (18 on), not STORED */
	bool		inherited;		/* an INHERITS child's column it only
								 * inherits (attislocal false) */
	char		storage;		/* attstorage */
	char		type_storage;	/* and its type's typstorage (the image shows
								 * "storage" only when they differ) */
	char		compression;	/* attcompression, '\0': the default */
	int			statistics;		/* attstattarget, -1: the default */
} DdlnImgColumn;

/* a constraint or an index */
typedef struct DdlnImgPart
{
	Oid			oid;
	Oid			indexid;		/* a constraint's index (p, u, x), else 0 */
	char	   *name;
	const char *type;			/* constraints: "primary key"... */
	char	   *definition;
	char	   *constraint;		/* indexes: the constraint it implements */
	/*
	 * constraints: what ALTER TABLE can change in place (same OID); indexes:
	 * "validated" is pg_index.indisvalid (ALTER INDEX ATTACH PARTITION makes
	 * a partitioned table's index valid, and its definition loses ON ONLY)
	 */
	bool		validated;
	bool		deferrable;
	bool		deferred;
	bool		inherited;		/* an INHERITS child's constraint it only
								 * inherits (conislocal false) */
	bool		clustered;		/* indexes: pg_index.indisclustered */
	List	   *reloptions;		/* indexes: storage parameters (WITH
								 * (...)), "name=value" strings */
} DdlnImgPart;

/* a sequence's parameters (pg_sequence) and the column owning it */
typedef struct DdlnImgSequence
{
	char	   *type;
	int64		start;
	int64		increment;
	int64		min;
	int64		max;
	int64		cache;
	bool		cycle;
	char	   *owner_schema;	/* NULL: owned by no column */
	char	   *owner_name;
	char	   *owner_column;
	bool		owner_identity; /* the column's identity sequence */
} DdlnImgSequence;

typedef struct DdlnImage
{
	Oid			relid;
	char	   *schema;
	char	   *name;
	char		relkind;
	bool		unlogged;
	List	   *reloptions;		/* "name=value" strings (WITH (...)) */
	DdlnImgSequence *seq;		/* a sequence's, else NULL */
	int			ncolumns;
	DdlnImgColumn *columns;
	int			nconstraints;
	DdlnImgPart *constraints;
	int			nindexes;
	DdlnImgPart *indexes;
	char		replident;
	char	   *replident_index;
	/* what only some kinds have (DdlnImageReadKind), else NULL */
	char	   *definition;		/* a view's or materialized view's query */
	char	   *partition_key;	/* a partitioned table's PARTITION BY */
	char	   *server;			/* a foreign table's server */
	List	   *options;		/* and its options, "name=value" strings */
	char	   *parent_schema;	/* a partition's partitioned table */
	char	   *parent_name;
	char	   *partition_bound;	/* and its FOR VALUES ... or DEFAULT */
	List	   *inherits;		/* INHERITS parents (not a partition's), as
								 * schema and name pairs, in inhseqno order */
	char	   *oftype_schema;	/* a typed table's type (OF type) */
	char	   *oftype_name;
	/*
	 * relimage.c's own: the catalog rows of the indexes as read (pg_index,
	 * pg_class), for an "after" of the same command to take those no
	 * invalidation touched since "read_at" (DdlnImageReadIndexes)
	 */
	uint64		read_at;
	uint64		targets_at;		/* and the columns' statistics targets were
								 * read at (0: not read) */
	int			nindexrows;
	struct DdlnIndexRows *indexrows;
} DdlnImage;

/* relimage.c */
extern bool DdlnImageKind(char relkind);
extern DdlnImage *DdlnImageRead(Oid relid, const DdlnImage *like, bool dropped);
extern void DdlnImgPushImage(DdlnJsonbState *st, const DdlnImage *img);
extern JsonbValue *DdlnImgImageValue(const DdlnImage *img, const DdlnImage *like,
									 const JsonbValue *likevalue);
extern const char *DdlnIdentityName(char identity);
extern const char *DdlnReplIdentName(char ri);
extern const char *DdlnStorageName(char storage);
extern const char *DdlnCompressionName(char compression);
extern void DdlnImgPushIndex(DdlnJsonbState *st, const DdlnImgPart *ind);
extern void DdlnImgPushConstraint(DdlnJsonbState *st, const DdlnImgPart *con);
extern void DdlnImgPushOwner(DdlnJsonbState *st, const DdlnImgSequence *seq);
extern void DdlnImgPushColumn(DdlnJsonbState *st, const DdlnImgColumn *col);
extern bool DdlnImgSameStrings(List *a, List *b);
extern void DdlnImgPushStrings(DdlnJsonbState *st, List *strings);
extern void DdlnImgPushInherits(DdlnJsonbState *st, const DdlnImage *img);
extern void DdlnImgPushOfType(DdlnJsonbState *st, const DdlnImage *img);
extern Jsonb *DdlnTypeImageDetails(Oid typid, char typtype);
extern bool DdlnImageSkipped(Oid relid);
extern Oid	DdlnImageRelationOf(Oid classId, Oid objectId);

/* imgdiff.c */
extern Jsonb *DdlnImageDetails(const DdlnImage *before, const DdlnImage *after,
								 List *partitions, Jsonb *with);

#endif							/* DDLN_RELIMAGE_H */
