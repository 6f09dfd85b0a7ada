/* Schema migrations compiled into the coordinator (coordinator/migrations/NNNN_name.sql,
 * embedded by scripts/embed-migrations.sh). Applied in file-name order at start, each
 * in its own transaction, recorded in schema_migrations; see docs/store.md. */
#ifndef KGB_COORD_MIGRATIONS_H
#define KGB_COORD_MIGRATIONS_H

#include <stddef.h>

typedef struct {
	int version;
	const char *name;
	const char *sql;
} kgb_migration_t;

extern const kgb_migration_t kgb_migrations[];
extern const size_t kgb_migrations_count;

#endif
