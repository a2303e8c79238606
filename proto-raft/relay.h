#ifndef RELAY_H
#define RELAY_H

struct event_base;

int relay_transport_init(struct raft_uv_transport *t, uv_loop_t *loop,
    struct event_base *base);
unsigned long relay_connections(struct raft_uv_transport *t);
const char *relay_mode(struct raft_uv_transport *t);

#endif
