/* A minimal blocking client of dqlite's wire protocol (version 1), enough
 * for the prototype: leader, add, assign, cluster, open, exec_sql,
 * query_sql of one integer column. */
#ifndef DQWIRE_H
#define DQWIRE_H

#include <stddef.h>
#include <stdint.h>

#define DQ_REQ_LEADER 0
#define DQ_REQ_OPEN 3
#define DQ_REQ_EXEC_SQL 8
#define DQ_REQ_QUERY_SQL 9
#define DQ_REQ_ADD 12
#define DQ_REQ_ASSIGN 13
#define DQ_REQ_CLUSTER 16

#define DQ_RES_FAILURE 0
#define DQ_RES_SERVER 1
#define DQ_RES_SERVERS 3
#define DQ_RES_DB 4
#define DQ_RES_RESULT 6
#define DQ_RES_ROWS 7
#define DQ_RES_EMPTY 8

/* SQLITE_IOERR_NOT_LEADER and SQLITE_IOERR_LEADERSHIP_LOST. */
#define DQ_NOT_LEADER (10 | (40 << 8))
#define DQ_LEADERSHIP_LOST (10 | (41 << 8))

struct dq {
	int fd;
	uint32_t db;
	uint64_t code;		/* of the last failure */
	char msg[256];
	unsigned char *buf;
	size_t cap;
};

int dq_connect(struct dq *c, const char *addr, int timeout_ms);
void dq_close(struct dq *c);
/* The leader's address into addr (empty: none known); its id into *id. */
int dq_leader(struct dq *c, uint64_t *id, char *addr, size_t len);
int dq_add(struct dq *c, uint64_t id, const char *addr);
int dq_assign(struct dq *c, uint64_t id, uint64_t role);
/* Print the members. */
int dq_cluster(struct dq *c);
int dq_open(struct dq *c, const char *name);
int dq_exec(struct dq *c, const char *sql, uint64_t *last_id,
    uint64_t *changes);
/* First column of the first row, an integer. */
int dq_query_int(struct dq *c, const char *sql, int64_t *v);

#endif
