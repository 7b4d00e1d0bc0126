/* RoCEv2 / InfiniBand transport headers as they appear on the wire (REFERENCE §1).
 * All multi-byte fields are big-endian. Sizes follow Linux rxe (rxe_hdr.h). */
#ifndef RSW_ROCE_HDR_H
#define RSW_ROCE_HDR_H

#include <stddef.h>
#include <stdint.h>

#define RSW_ROCE_UDP_PORT 4791

#define RSW_BTH_LEN 12
#define RSW_RDETH_LEN 4
#define RSW_DETH_LEN 8
#define RSW_FETH_LEN 4
#define RSW_RETH_LEN 16
#define RSW_ATOMICETH_LEN 28
#define RSW_AETH_LEN 4
#define RSW_ATOMICACKETH_LEN 8
#define RSW_IMMDT_LEN 4
#define RSW_IETH_LEN 4
#define RSW_ICRC_LEN 4
#define RSW_CNP_RSVD_LEN 16

/* BTH byte 1 */
#define RSW_BTH_SE 0x80
#define RSW_BTH_MIGREQ 0x40
#define RSW_BTH_PADCNT_MASK 0x30
#define RSW_BTH_PADCNT_SHIFT 4
#define RSW_BTH_TVER_MASK 0x0F
/* BTH byte 4 */
#define RSW_BTH_FECN 0x80
#define RSW_BTH_BECN 0x40
/* BTH byte 8 */
#define RSW_BTH_ACKREQ 0x80

/* Transport bases and the CNP opcode (include/rdma/ib_pack.h). */
#define RSW_OP_RC 0x00
#define RSW_OP_UC 0x20
#define RSW_OP_RD 0x40
#define RSW_OP_UD 0x60
#define RSW_OP_CNP 0x81

struct rsw_bth {
	uint8_t opcode;
	uint8_t flags; /* SE, MigReq, PadCnt, TVer */
	uint16_t pkey;
	uint8_t becn_fecn;
	uint8_t dqp[3];
	uint8_t ackreq;
	uint8_t psn[3];
} __attribute__((packed));

/* Extended headers an opcode carries; the order of the bits is the order on the wire. */
enum rsw_roce_ext {
	RSW_EXT_RDETH = 1u << 0,
	RSW_EXT_DETH = 1u << 1,
	RSW_EXT_FETH = 1u << 2,
	RSW_EXT_RETH = 1u << 3,
	RSW_EXT_ATOMICETH = 1u << 4,
	RSW_EXT_AETH = 1u << 5,
	RSW_EXT_ATOMICACKETH = 1u << 6,
	RSW_EXT_IMMDT = 1u << 7,
	RSW_EXT_IETH = 1u << 8,
	RSW_EXT_CNP = 1u << 9, /* the 16 reserved bytes of a CNP */
	RSW_EXT_COUNT = 10,
};

/* Flag in the opcode table: the opcode is defined. */
#define RSW_OPC_VALID 0x8000u

/* Per-opcode set of extended headers (RSW_EXT_* | RSW_OPC_VALID); 0 = reserved opcode. */
extern const uint16_t rsw_roce_opcode_ext[256];

/* Name of an extended header bit, e.g. "reth". */
const char *rsw_roce_ext_name(unsigned bit_index);
/* Length in bytes of an extended header bit. */
unsigned rsw_roce_ext_len(unsigned bit_index);
/* Human name of an opcode into buf, e.g. "RC_RDMA_WRITE_FIRST"; "RESERVED" if undefined. */
const char *rsw_roce_opcode_name(uint8_t opcode, char *buf, size_t len);

#endif
