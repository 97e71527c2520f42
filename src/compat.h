/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  PostgreSQL version differences, each mapped to one name, so that no
 *	  other file tests PG_VERSION_NUM.
 *
 * Copyright (c) 2026, the ddl_notify authors
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDLN_COMPAT_H
#define DDLN_COMPAT_H

#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "utils/acl.h"

/* privilege checks on a function and a schema (object_aclcheck() from 16) */
#if PG_VERSION_NUM >= 160000
#define DdlnProcAclCheck(proc, role) object_aclcheck(ProcedureRelationId, proc, role, ACL_EXECUTE)
#define DdlnSchemaAclCheck(nsp, role) object_aclcheck(NamespaceRelationId, nsp, role, ACL_USAGE)
#else
#define DdlnProcAclCheck(proc, role) pg_proc_aclcheck(proc, role, ACL_EXECUTE)
#define DdlnSchemaAclCheck(nsp, role) pg_namespace_aclcheck(nsp, role, ACL_USAGE)
#endif

#endif							/* DDLN_COMPAT_H */
