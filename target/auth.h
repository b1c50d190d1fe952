/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVMe in-band authentication, DH-HMAC-CHAP (see auth.c): the secrets in
 * the form nvme-cli and Linux use, and one queue's exchange.
 */
#ifndef LCLOUD_TARGET_AUTH_H
#define LCLOUD_TARGET_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DHCHAP_MAX_HASH 64 /* SHA-512's */

/* A DH-HMAC-CHAP secret: its key, and the hash (1 SHA-256, 2 SHA-384, 3 SHA-512; 0 none) that transforms it. */
struct dhchap_key {
	uint8_t key[DHCHAP_MAX_HASH];
	uint8_t len;  /* 32, 48 or 64 */
	uint8_t hash;
};

/* Where one queue's exchange stands (the message the target expects or sends next). */
enum auth_step {
	AUTH_NEGOTIATE,  /* the host's AUTH_Negotiate (Authentication Send) */
	AUTH_CHALLENGE,  /* the target's DH-HMAC-CHAP_Challenge (Authentication Receive) */
	AUTH_REPLY,      /* the host's DH-HMAC-CHAP_Reply */
	AUTH_SUCCESS1,   /* the target's DH-HMAC-CHAP_Success1 */
	AUTH_SUCCESS2,   /* the host's DH-HMAC-CHAP_Success2 (when it asked the target to authenticate) */
	AUTH_FAILURE1,   /* the target's AUTH_Failure1, then the connection closes */
	AUTH_DONE,
};

struct auth_state {
	enum auth_step step;
	uint16_t tid;          /* the transaction, from AUTH_Negotiate */
	uint8_t hash_id;       /* the HMAC chosen: 1 SHA-256, 2 SHA-384, 3 SHA-512 */
	uint8_t dh_group;      /* 0: the NULL group */
	uint8_t hl;            /* the hash's length */
	uint8_t failure;       /* the reason code explanation AUTH_Failure1 carries */
	uint32_t s1, s2;       /* sequence numbers: the target's challenge's, the host's (0: not asked) */
	uint8_t c1[DHCHAP_MAX_HASH], c2[DHCHAP_MAX_HASH];
	char why[96];          /* for the log, when it fails */
};

/*
 * TEXT ("DHHC-1:XX:base64(key and its CRC-32):", what nvme gen-dhchap-key
 * prints) into *RET. 0, or -EINVAL with ERR saying what is wrong.
 */
int dhchap_key_parse(const char *text, struct dhchap_key *ret, char *err, size_t err_len);
/*
 * The secret in the file PATH (one line; the file readable by its owner
 * alone, as the secret is). 0, or -errno with ERR.
 */
int dhchap_key_load(const char *path, struct dhchap_key *ret, char *err, size_t err_len);

struct conn;
struct command;
/* Authentication Send and Receive on C (fabrics.c calls them): an NVMe status. */
int auth_send(struct conn *c, struct command *cmd);
int auth_receive(struct conn *c, struct command *cmd);

#endif
