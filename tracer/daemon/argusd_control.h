/* SPDX-License-Identifier: Apache-2.0 */
/*
 * argusd's control socket (argusd_control.c): a root-only Unix socket that
 * answers one-line commands, `status` (one JSON line) and `stop`.  Clients are
 * served from the daemon's poll loop and never block it.
 */
#ifndef ARGUSD_CONTROL_H
#define ARGUSD_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#define RATE_SAMPLES 8
#define MAX_CLIENTS 8
#define CLIENT_TIMEOUT_NS 5000000000ull
#define CMD_MAX 256

struct rate_sample {
	uint64_t t_ns;
	uint64_t records;
};

struct client {
	int fd;
	size_t len;
	uint64_t since_ns;
	char buf[CMD_MAX];
};

struct daemon;

/* The socket's directory: nobody else may write it (or it is sticky). */
int check_socket_dir(struct daemon *d);
/* Refuses to start when another daemon answers on the path. */
int control_listen(struct daemon *d);
void accept_clients(struct daemon *d);
void read_client(struct daemon *d, struct client *c);
void client_close(struct client *c);
/* The events/s window `status` reports, sampled once a tick. */
void sample_rate(struct daemon *d, uint64_t t, uint64_t records);

#endif /* ARGUSD_CONTROL_H */
