/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe/TCP wire format the target speaks (NVMe/TCP transport 1.0 and the
 * Fabrics and base specifications it carries), as byte offsets into little-
 * endian buffers: the target reads and writes bytes, never casts a packed
 * struct over what the network sent, so a short or odd PDU cannot be read
 * past its end.
 */
#ifndef LCLOUD_TARGET_NVME_TCP_H
#define LCLOUD_TARGET_NVME_TCP_H

#include <stdint.h>
#include <string.h>

/* PDU types */
enum {
	TCP_ICREQ = 0x00,
	TCP_ICRESP = 0x01,
	TCP_H2C_TERM = 0x02,
	TCP_C2H_TERM = 0x03,
	TCP_CAPSULE_CMD = 0x04,
	TCP_CAPSULE_RESP = 0x05,
	TCP_H2C_DATA = 0x06,
	TCP_C2H_DATA = 0x07,
	TCP_R2T = 0x09,
};

/* common header flags */
#define TCP_F_HDGST 0x01
#define TCP_F_DDGST 0x02
#define TCP_F_DATA_LAST 0x04
#define TCP_F_DATA_SUCCESS 0x08

/* header lengths, fixed by the transport specification */
#define TCP_CH_LEN 8
#define TCP_ICREQ_LEN 128
#define TCP_CAPSULE_CMD_HLEN 72 /* 8 + a 64-byte submission queue entry */
#define TCP_CAPSULE_RESP_LEN 24 /* 8 + a 16-byte completion queue entry */
#define TCP_DATA_HLEN 24        /* H2CData, C2HData, R2T */
#define TCP_TERM_HLEN 24

/* ICReq / ICResp fields */
#define ICREQ_PFV 8
#define ICREQ_HPDA 10
#define ICREQ_DGST 11
#define ICREQ_MAXR2T 12
#define ICRESP_CPDA 10
#define ICRESP_DGST 11
#define ICRESP_MAXDATA 12

/* H2CData / C2HData / R2T fields */
#define DATA_CCCID 8
#define DATA_TTAG 10
#define DATA_OFFSET 12
#define DATA_LENGTH 16

/* submission queue entry fields (offsets into the 64 bytes) */
#define SQE_OPC 0
#define SQE_FLAGS 1
#define SQE_CID 2
#define SQE_NSID 4
#define SQE_SGL_ADDR 24
#define SQE_SGL_LEN 32
#define SQE_SGL_TYPE 39
#define SQE_CDW10 40
#define SQE_CDW11 44
#define SQE_CDW12 48
#define SQE_CDW13 52
#define SQE_CDW14 56
#define SQE_CDW15 60
#define SQE_PSDT_MASK 0xc0

/* SGL descriptor types the Linux host sends (type << 4 | subtype) */
#define SGL_INCAPSULE 0x01 /* data block, offset: the data follows the command */
#define SGL_TRANSPORT 0x5a /* transport data block, transport specific: R2T or C2HData */

/* Fabrics commands (opcode 0x7f, fctype at byte 4) */
#define NVME_FABRICS 0x7f
#define FCTYPE_PROPERTY_SET 0x00
#define FCTYPE_CONNECT 0x01
#define FCTYPE_PROPERTY_GET 0x04
#define FCTYPE_AUTH_SEND 0x05
#define FCTYPE_AUTH_RECEIVE 0x06
#define CONNECT_RECFMT 40
#define CONNECT_QID 42
#define CONNECT_SQSIZE 44
#define CONNECT_CATTR 46
#define CONNECT_KATO 48
#define CONNECT_DATA_LEN 1024
#define CONNECT_CATTR_NO_SQFLOW 0x04
#define CONNECT_AUTHREQ_ATR (1u << 17) /* Connect's result: authentication required */
#define PROP_ATTRIB 40
#define PROP_OFFSET 44
#define PROP_VALUE 48

/* controller properties */
#define PROP_CAP 0x00
#define PROP_VS 0x08
#define PROP_CC 0x14
#define PROP_CSTS 0x1c

/* status: SCT << 8 | SC */
#define SC_SUCCESS 0x000
#define SC_INVALID_OPCODE 0x001
#define SC_INVALID_FIELD 0x002
#define SC_INTERNAL 0x006
#define SC_INVALID_NS 0x00b
#define SC_SGL_LENGTH_INVALID 0x00f
#define SC_SGL_TYPE_INVALID 0x011
#define SC_COMMAND_SEQUENCE 0x00c
#define SC_NS_WRITE_PROTECTED 0x020 /* Namespace is Write Protected */
#define SC_LBA_RANGE 0x080
#define SC_CAPACITY_EXCEEDED 0x081
#define SC_INVALID_LOG_PAGE 0x109
#define SC_CONNECT_INVALID_PARAM 0x182
#define SC_CONNECT_INVALID_HOST 0x184 /* the host may not connect to this subsystem */
#define SC_AUTH_REQUIRED 0x191        /* the queue has not authenticated yet */
#define SC_WRITE_FAULT 0x280
#define SC_READ_ERROR 0x281
#define SC_DNR 0x4000 /* do not retry: bit 14 of the status field without the phase */

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static inline void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* Copies S into the fixed-width ASCII field P of LEN bytes, padded with spaces. */
static inline void put_ascii(uint8_t *p, size_t len, const char *s)
{
	size_t n = strlen(s);

	memset(p, ' ', len);
	memcpy(p, s, n < len ? n : len);
}

#endif
