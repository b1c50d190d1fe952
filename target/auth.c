/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NVMe in-band authentication with DH-HMAC-CHAP (NVMe Base Specification,
 * "Authentication"), the controller's side, as Linux's host (nvme connect
 * --dhchap-secret, drivers/nvme/host/auth.c) speaks it, with the NULL
 * Diffie-Hellman group. After Fabrics Connect every queue, admin and I/O,
 * authenticates on its own, by Authentication Send and Receive:
 *
 *   host: AUTH_Negotiate (transaction, the hashes and groups it offers)
 *   target: DH-HMAC-CHAP_Challenge (the hash chosen, sequence number S1, C1)
 *   host: DH-HMAC-CHAP_Reply (R1 = HMAC(Kh', C1 | S1 | T | 0 | "HostHost" |
 *         NQNh | 0 | NQNc), and C2 and S2 if it wants the target proven too)
 *   target: DH-HMAC-CHAP_Success1 (and R2 = HMAC(Kc', C2 | S2 | T | 0 |
 *         "Controller" | NQNc | 0 | NQNh) when asked)
 *   host: DH-HMAC-CHAP_Success2, when it asked
 *
 * Kh' is the host secret transformed by HMAC with the hash its "DHHC-1:XX:"
 * names over NQNh | "NVMe-over-Fabrics" (none for 00), Kc' the controller
 * secret over NQNc. A failure is an AUTH_Failure1 with the reason, and the
 * connection closes. Every message is a hostile host's: its length, type,
 * transaction and sizes are checked before a field is used. The hashes are
 * OpenSSL's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "nvme_tcp.h"
#include "target.h"

enum {
	AUTH_SECP_DHCHAP = 0xe9,
	AUTH_COMMON = 0x00,          /* auth_type: Negotiate, Failure1, Failure2 */
	AUTH_DHCHAP = 0x01,          /* auth_type: the DH-HMAC-CHAP messages */
	MSG_NEGOTIATE = 0x00,
	MSG_CHALLENGE = 0x01,
	MSG_REPLY = 0x02,
	MSG_SUCCESS1 = 0x03,
	MSG_SUCCESS2 = 0x04,
	MSG_FAILURE2 = 0xf0,
	MSG_FAILURE1 = 0xf1,
	DHCHAP_AUTH_ID = 0x01,       /* a protocol descriptor's AUTHID for DH-HMAC-CHAP */
	DH_GROUP_NULL = 0x00,
	/* AUTH_Failure reason code explanations */
	FAIL_FAILED = 0x01,
	FAIL_NOT_USABLE = 0x02,
	FAIL_CONCAT_MISMATCH = 0x03,
	FAIL_HASH_UNUSABLE = 0x04,
	FAIL_DHGROUP_UNUSABLE = 0x05,
	FAIL_INCORRECT_PAYLOAD = 0x06,
	FAIL_INCORRECT_MESSAGE = 0x07,
};

#define AUTH_SPSP0 41
#define AUTH_SPSP1 42
#define AUTH_SECP 43
#define AUTH_LENGTH 44        /* TL (Send) or AL (Receive) */
#define AUTH_MAX_MESSAGE 4096 /* the largest a host sends or takes (Linux's buffer) */
#define NEGOTIATE_HLEN 8
#define DESCRIPTOR_LEN 64
#define DH_IDS_AT 30          /* in a descriptor's ID list: hashes from 0, groups from 30 */

static const EVP_MD *hash_md(uint8_t id)
{
	switch (id) {
	case 1:
		return EVP_sha256();
	case 2:
		return EVP_sha384();
	case 3:
		return EVP_sha512();
	}
	return NULL;
}

static uint8_t hash_len(uint8_t id)
{
	return id >= 1 && id <= 3 ? (uint8_t)(16 + 16 * id) : 0;
}

static const char *hash_name(uint8_t id)
{
	static const char *const names[] = {"none", "hmac(sha256)", "hmac(sha384)", "hmac(sha512)"};

	return id <= 3 ? names[id] : "?";
}

/* CRC-32 (ISO-HDLC, as zlib's): the check a DHHC-1 secret carries after its key. */
static uint32_t crc32_iso(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffu;

	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

/* Strict base64 (RFC 4648, padded, canonical): N characters of IN into OUT (at most CAP bytes). Bytes, or -1. */
static int base64_decode(const char *in, size_t n, uint8_t *out, size_t cap)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t len = 0;

	if (n % 4)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;
		int pad = 0;

		for (int k = 0; k < 4; k++) {
			const char *at = in[i + k] ? strchr(alphabet, in[i + k]) : NULL;

			if (in[i + k] == '=' && i + 4 == n && k >= 2 && (k == 3 || in[i + 3] == '=')) {
				pad++;
				v <<= 6;
				continue;
			}
			if (!at || pad)
				return -1;
			v = v << 6 | (uint32_t)(at - alphabet);
		}
		if (v & ((1u << 8 * pad) - 1))
			return -1; /* bits past the last byte: not the one encoding of its bytes */
		for (int k = 0; k < 3 - pad; k++) {
			if (len == cap)
				return -1;
			out[len++] = (uint8_t)(v >> (16 - 8 * k));
		}
	}
	return (int)len;
}

int dhchap_key_parse(const char *text, struct dhchap_key *ret, char *err, size_t err_len)
{
	uint8_t raw[DHCHAP_MAX_HASH + 4 + 3];
	const char *b64, *end;
	int n;

	memset(ret, 0, sizeof(*ret));
	if (strncmp(text, "DHHC-1:", 7) != 0 || text[7] < '0' || text[7] > '3' || text[8] < '0' || text[8] > '9' ||
	    text[9] != ':' || text[7] * 10 + text[8] - '0' * 11 > 3) {
		snprintf(err, err_len, "not a DH-HMAC-CHAP secret: DHHC-1:XX:KEY: with XX 00 (none), 01 (SHA-256), "
			 "02 (SHA-384) or 03 (SHA-512), as nvme gen-dhchap-key prints one");
		return -EINVAL;
	}
	b64 = text + 10;
	end = strchr(b64, ':');
	if (!end || end[1] != '\0') {
		snprintf(err, err_len, "the secret's key ends with ':' and nothing follows it");
		return -EINVAL;
	}
	n = base64_decode(b64, (size_t)(end - b64), raw, sizeof(raw));
	if (n != 36 && n != 52 && n != 68) {
		snprintf(err, err_len, "the secret's key is not base64 of a 32, 48 or 64-byte key and its CRC-32");
		return -EINVAL;
	}
	if (crc32_iso(raw, (size_t)n - 4) != ((uint32_t)raw[n - 4] | (uint32_t)raw[n - 3] << 8 |
					       (uint32_t)raw[n - 2] << 16 | (uint32_t)raw[n - 1] << 24)) {
		snprintf(err, err_len, "the secret's CRC-32 does not match its key (a mistyped secret?)");
		OPENSSL_cleanse(raw, sizeof(raw));
		return -EINVAL;
	}
	memcpy(ret->key, raw, (size_t)n - 4);
	ret->len = (uint8_t)(n - 4);
	ret->hash = (uint8_t)(text[8] - '0');
	OPENSSL_cleanse(raw, sizeof(raw));
	return 0;
}

int dhchap_key_load(const char *path, struct dhchap_key *ret, char *err, size_t err_len)
{
	char text[256];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), r = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, err_len, "%s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "not a regular file");
		r = -EINVAL;
		goto out;
	}
	if (st.st_mode & 077) {
		/* a secret other users can read is theirs too */
		snprintf(err, err_len, "other users may read or write it (mode %04o): chmod 600 it", st.st_mode & 07777);
		r = -EPERM;
		goto out;
	}
	n = read(fd, text, sizeof(text) - 1);
	if (n < 0) {
		r = -errno;
		snprintf(err, err_len, "%s", strerror(errno));
		goto out;
	}
	text[n] = '\0';
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ' || text[n - 1] == '\t'))
		text[--n] = '\0';
	r = dhchap_key_parse(text, ret, err, err_len);
	OPENSSL_cleanse(text, sizeof(text));
out:
	if (fd >= 0)
		close(fd);
	return r;
}

/* KEY transformed for NQN (nothing to do for hash 0) into OUT; its length. */
static unsigned int transform(const struct dhchap_key *key, const char *nqn, uint8_t *out)
{
	uint8_t msg[TARGET_NQN_MAX + 32];
	size_t n = strlen(nqn);
	unsigned int len = 0;

	if (key->hash == 0) {
		memcpy(out, key->key, key->len);
		return key->len;
	}
	if (n > TARGET_NQN_MAX)
		return 0; /* a peer's NQN longer than any NQN: no key, and the response fails */
	memcpy(msg, nqn, n);
	memcpy(msg + n, "NVMe-over-Fabrics", 17);
	if (!HMAC(hash_md(key->hash), key->key, key->len, msg, n + 17, out, &len))
		return 0;
	return len;
}

/* A DH-HMAC-CHAP response: HMAC(KEY for FIRST, C | S | T | 0 | ROLE | FIRST | 0 | SECOND) into OUT. */
static bool response(const struct auth_state *a, const struct dhchap_key *key, const uint8_t *challenge,
		     uint32_t seq, const char *role, const char *first, const char *second, uint8_t *out)
{
	uint8_t k[DHCHAP_MAX_HASH], msg[DHCHAP_MAX_HASH + 16 + 2 * (TARGET_NQN_MAX + 1) + 2];
	size_t n = 0, lr = strlen(role), l1 = strlen(first), l2 = strlen(second);
	unsigned int klen = transform(key, first, k), len = 0;
	bool ok;

	if (!klen || l1 > TARGET_NQN_MAX || l2 > TARGET_NQN_MAX)
		return false;
	memcpy(msg, challenge, a->hl);
	n = a->hl;
	put32(msg + n, seq);
	put16(msg + n + 4, a->tid);
	msg[n + 6] = 0; /* SC_C: no secure channel */
	n += 7;
	memcpy(msg + n, role, lr);
	n += lr;
	memcpy(msg + n, first, l1);
	n += l1;
	msg[n++] = 0;
	memcpy(msg + n, second, l2);
	n += l2;
	ok = HMAC(hash_md(a->hash_id), k, klen, msg, n, out, &len) && len == a->hl;
	OPENSSL_cleanse(k, sizeof(k));
	return ok;
}

/* The exchange fails: the next Receive gets AUTH_Failure1 with REASON, and the connection closes. */
static int fail(struct conn *c, uint8_t reason, const char *why)
{
	c->auth.step = AUTH_FAILURE1;
	c->auth.failure = reason;
	snprintf(c->auth.why, sizeof(c->auth.why), "%s", why);
	c->authenticated = false;
	c->established = false;
	return SC_SUCCESS; /* the Send itself went through: the failure is the next message's */
}

static int negotiate(struct conn *c, const uint8_t *d, uint32_t tl)
{
	uint8_t napd = d[7], sc_c = d[6];
	const uint8_t *desc = NULL;

	memset(&c->auth, 0, sizeof(c->auth));
	c->auth.tid = get16(d + 4);
	if (napd == 0 || tl < NEGOTIATE_HLEN + (uint32_t)napd * DESCRIPTOR_LEN)
		return fail(c, FAIL_INCORRECT_PAYLOAD, "AUTH_Negotiate shorter than its protocol descriptors");
	if (sc_c != 0)
		return fail(c, FAIL_CONCAT_MISMATCH, "the host asks for a secure channel (TLS), which is not offered");
	for (unsigned int i = 0; i < napd && !desc; i++)
		if (d[NEGOTIATE_HLEN + i * DESCRIPTOR_LEN] == DHCHAP_AUTH_ID)
			desc = d + NEGOTIATE_HLEN + i * DESCRIPTOR_LEN;
	if (!desc)
		return fail(c, FAIL_NOT_USABLE, "the host offers no DH-HMAC-CHAP");
	if (desc[2] > DH_IDS_AT || desc[3] > DH_IDS_AT)
		return fail(c, FAIL_INCORRECT_PAYLOAD, "AUTH_Negotiate lists more than 30 hashes or groups");
	/* SHA-256 when offered (as Linux's nvmet chooses by default), else the first the host lists */
	for (unsigned int i = 0; i < desc[2]; i++)
		if (hash_len(desc[4 + i]) && (!c->auth.hash_id || desc[4 + i] == 1))
			c->auth.hash_id = desc[4 + i];
	if (!c->auth.hash_id)
		return fail(c, FAIL_HASH_UNUSABLE, "the host offers no hash this target has (SHA-256, -384, -512)");
	for (unsigned int i = 0; i < desc[3] && c->auth.step != AUTH_CHALLENGE; i++)
		if (desc[4 + DH_IDS_AT + i] == DH_GROUP_NULL)
			c->auth.step = AUTH_CHALLENGE;
	if (c->auth.step != AUTH_CHALLENGE)
		return fail(c, FAIL_DHGROUP_UNUSABLE, "the host does not offer the NULL DH group, the one this target has");
	c->auth.hl = hash_len(c->auth.hash_id);
	c->auth.dh_group = DH_GROUP_NULL;
	return SC_SUCCESS;
}

static int reply(struct conn *c, const uint8_t *d, uint32_t tl)
{
	struct auth_state *a = &c->auth;
	const struct target *t = c->t;
	uint8_t want[DHCHAP_MAX_HASH];
	uint16_t dhvlen = get16(d + 10);

	if (tl < 16 || d[6] != a->hl || tl < 16u + 2u * a->hl + dhvlen)
		return fail(c, FAIL_INCORRECT_PAYLOAD, "DH-HMAC-CHAP_Reply's lengths do not fit the hash or the message");
	if (dhvlen)
		return fail(c, FAIL_INCORRECT_PAYLOAD, "DH-HMAC-CHAP_Reply carries a DH value with the NULL group");
	if (!response(a, &t->cfg.host_key, a->c1, a->s1, "HostHost", c->ctrl->hostnqn, t->cfg.nqn, want))
		return fail(c, FAIL_FAILED, "the host's response could not be computed");
	if (CRYPTO_memcmp(want, d + 16, a->hl) != 0)
		return fail(c, FAIL_FAILED, "the host's response does not match the secret (a wrong --dhchap-secret?)");
	a->s2 = d[8] ? get32(d + 12) : 0; /* S2 0 with C2: no bidirectional authentication (a PSK's, not offered) */
	if (a->s2) {
		if (!t->cfg.ctrl_key_set)
			return fail(c, FAIL_FAILED, "the host asks the target to authenticate itself, and it has no "
				    "--dhchap-ctrl-secret");
		memcpy(a->c2, d + 16 + a->hl, a->hl);
	} else {
		c->authenticated = true;
	}
	a->step = AUTH_SUCCESS1;
	return SC_SUCCESS;
}

/* The Send command's checks, common to both directions: an NVMe status. */
static int check_command(const struct command *cmd, uint32_t *ret_len)
{
	uint32_t len = get32(cmd->sqe + AUTH_LENGTH);

	if (cmd->sqe[AUTH_SECP] != AUTH_SECP_DHCHAP || cmd->sqe[AUTH_SPSP0] != 1 || cmd->sqe[AUTH_SPSP1] != 1 ||
	    len == 0 || len > AUTH_MAX_MESSAGE)
		return SC_INVALID_FIELD;
	if (len != cmd->data_len)
		return SC_SGL_LENGTH_INVALID;
	*ret_len = len;
	return SC_SUCCESS;
}

static void authenticated_line(struct conn *c)
{
	tlog(c->t, "conn %u: queue %u of controller %u: host %s authenticated (DH-HMAC-CHAP, %s, NULL group%s)",
	     c->id, c->qid, c->ctrl->cntlid, c->ctrl->hostnqn, hash_name(c->auth.hash_id),
	     c->auth.s2 ? "; the controller too" : "");
}

int auth_send(struct conn *c, struct command *cmd)
{
	const uint8_t *d = cmd->data;
	uint32_t tl = 0;
	int status;

	if (!c->auth_required)
		return SC_INVALID_OPCODE; /* no secret was given: nothing to authenticate with */
	status = check_command(cmd, &tl);
	if (status)
		return status;
	if (tl < 8)
		return fail(c, FAIL_INCORRECT_PAYLOAD, "an authentication message shorter than its header");
	if (d[0] == AUTH_COMMON && d[1] == MSG_NEGOTIATE)
		return negotiate(c, d, tl); /* a new transaction, also to authenticate again */
	if (d[0] == AUTH_COMMON && d[1] == MSG_FAILURE2) {
		snprintf(c->reason, sizeof(c->reason), "authentication: the host gave up (AUTH_Failure2, reason 0x%02x%s)",
			 d[7], d[7] == FAIL_FAILED ? ": the target's response did not match the host's "
			 "--dhchap-ctrl-secret" : "");
		c->authenticated = false;
		c->established = false;
		c->close_after_reply = true;
		return SC_SUCCESS;
	}
	if (d[0] != AUTH_DHCHAP || (c->auth.step != AUTH_REPLY && c->auth.step != AUTH_SUCCESS2) ||
	    d[1] != (c->auth.step == AUTH_REPLY ? MSG_REPLY : MSG_SUCCESS2))
		return fail(c, FAIL_INCORRECT_MESSAGE, "an authentication message out of turn");
	if (get16(d + 4) != c->auth.tid)
		return fail(c, FAIL_INCORRECT_PAYLOAD, "an authentication message of another transaction");
	if (d[1] == MSG_REPLY) {
		status = reply(c, d, tl);
		if (c->authenticated)
			authenticated_line(c);
		return status;
	}
	if (tl < 16)
		return fail(c, FAIL_INCORRECT_PAYLOAD, "DH-HMAC-CHAP_Success2 shorter than 16 bytes");
	c->authenticated = true;
	c->auth.step = AUTH_DONE;
	authenticated_line(c);
	return SC_SUCCESS;
}

int auth_receive(struct conn *c, struct command *cmd)
{
	struct auth_state *a = &c->auth;
	const struct target *t = c->t;
	uint8_t *d = cmd->data;
	uint32_t al = 0;
	int status;

	if (!c->auth_required)
		return SC_INVALID_OPCODE;
	status = check_command(cmd, &al);
	if (status)
		return status;
	switch (a->step) {
	case AUTH_CHALLENGE:
		if (al < 16u + a->hl)
			return SC_INVALID_FIELD;
		do {
			if (RAND_bytes((uint8_t *)&a->s1, sizeof(a->s1)) != 1 || RAND_bytes(a->c1, a->hl) != 1)
				return SC_INTERNAL;
		} while (a->s1 == 0); /* 0 is no sequence number */
		d[0] = AUTH_DHCHAP;
		d[1] = MSG_CHALLENGE;
		put16(d + 4, a->tid);
		d[6] = a->hl;
		d[8] = a->hash_id;
		d[9] = a->dh_group;
		put16(d + 10, 0); /* DHVLEN: the NULL group has no DH value */
		put32(d + 12, a->s1);
		memcpy(d + 16, a->c1, a->hl);
		a->step = AUTH_REPLY;
		return SC_SUCCESS;
	case AUTH_SUCCESS1:
		if (al < 16u + (a->s2 ? a->hl : 0))
			return SC_INVALID_FIELD;
		d[0] = AUTH_DHCHAP;
		d[1] = MSG_SUCCESS1;
		put16(d + 4, a->tid);
		d[6] = a->hl;
		if (a->s2) {
			if (!response(a, &t->cfg.ctrl_key, a->c2, a->s2, "Controller", t->cfg.nqn, c->ctrl->hostnqn, d + 16)) {
				memset(d, 0, al);
				fail(c, FAIL_FAILED, "the controller's response could not be computed");
				break;
			}
			d[8] = 1; /* RVALID */
		}
		a->step = a->s2 ? AUTH_SUCCESS2 : AUTH_DONE;
		return SC_SUCCESS;
	default:
		if (a->step != AUTH_FAILURE1)
			fail(c, FAIL_INCORRECT_MESSAGE, "Authentication Receive with no message to answer");
		break;
	}
	/* AUTH_Failure1, then the connection closes */
	if (al < 8)
		return SC_INVALID_FIELD;
	d[0] = AUTH_COMMON;
	d[1] = MSG_FAILURE1;
	put16(d + 4, a->tid);
	d[6] = 0x01; /* reason code: authentication failure */
	d[7] = a->failure;
	snprintf(c->reason, sizeof(c->reason), "authentication failed: %s", a->why);
	c->close_after_reply = true;
	return SC_SUCCESS;
}
