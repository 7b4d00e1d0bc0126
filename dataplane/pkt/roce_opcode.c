/* Which extended headers follow the BTH for each opcode (Linux rxe_opcode.c, IBTA vol.1 §9.2). */
#include <stdio.h>

#include "roce_hdr.h"

#define V RSW_OPC_VALID
#define RD_ RSW_EXT_RDETH
#define DE RSW_EXT_DETH
#define FE RSW_EXT_FETH
#define RE RSW_EXT_RETH
#define AT RSW_EXT_ATOMICETH
#define AE RSW_EXT_AETH
#define AA RSW_EXT_ATOMICACKETH
#define IM RSW_EXT_IMMDT
#define IE RSW_EXT_IETH

const uint16_t rsw_roce_opcode_ext[256] = {
	/* RC */
	[0x00] = V, [0x01] = V, [0x02] = V, [0x03] = V | IM, [0x04] = V, [0x05] = V | IM,
	[0x06] = V | RE, [0x07] = V, [0x08] = V, [0x09] = V | IM, [0x0A] = V | RE, [0x0B] = V | RE | IM,
	[0x0C] = V | RE,
	[0x0D] = V | AE, [0x0E] = V, [0x0F] = V | AE, [0x10] = V | AE,
	[0x11] = V | AE, [0x12] = V | AE | AA, [0x13] = V | AT, [0x14] = V | AT,
	[0x16] = V | IE, [0x17] = V | IE,
	[0x1C] = V | FE | RE, /* FLUSH */
	[0x1D] = V | RE,      /* ATOMIC WRITE */
	/* UC: SEND and RDMA WRITE only */
	[0x20] = V, [0x21] = V, [0x22] = V, [0x23] = V | IM, [0x24] = V, [0x25] = V | IM,
	[0x26] = V | RE, [0x27] = V, [0x28] = V, [0x29] = V | IM, [0x2A] = V | RE, [0x2B] = V | RE | IM,
	/* RD: RDETH always, DETH on requests */
	[0x40] = V | RD_ | DE, [0x41] = V | RD_ | DE, [0x42] = V | RD_ | DE, [0x43] = V | RD_ | DE | IM,
	[0x44] = V | RD_ | DE, [0x45] = V | RD_ | DE | IM,
	[0x46] = V | RD_ | DE | RE, [0x47] = V | RD_ | DE, [0x48] = V | RD_ | DE,
	[0x49] = V | RD_ | DE | IM, [0x4A] = V | RD_ | DE | RE, [0x4B] = V | RD_ | DE | RE | IM,
	[0x4C] = V | RD_ | DE | RE,
	[0x4D] = V | RD_ | AE, [0x4E] = V | RD_, [0x4F] = V | RD_ | AE, [0x50] = V | RD_ | AE,
	[0x51] = V | RD_ | AE, [0x52] = V | RD_ | AE | AA, [0x53] = V | RD_ | DE | AT,
	[0x54] = V | RD_ | DE | AT,
	/* UD: SEND only / only with immediate */
	[0x64] = V | DE, [0x65] = V | DE | IM,
	/* Congestion notification packet (RoCEv2 annex A17) */
	[RSW_OP_CNP] = V | RSW_EXT_CNP,
};

static const struct {
	const char *name;
	unsigned len;
} ext_info[RSW_EXT_COUNT] = {
	{"rdeth", RSW_RDETH_LEN}, {"deth", RSW_DETH_LEN}, {"feth", RSW_FETH_LEN},
	{"reth", RSW_RETH_LEN}, {"atomiceth", RSW_ATOMICETH_LEN}, {"aeth", RSW_AETH_LEN},
	{"atomicacketh", RSW_ATOMICACKETH_LEN}, {"immdt", RSW_IMMDT_LEN}, {"ieth", RSW_IETH_LEN},
	{"cnp", RSW_CNP_RSVD_LEN},
};

const char *rsw_roce_ext_name(unsigned bit_index)
{
	return bit_index < RSW_EXT_COUNT ? ext_info[bit_index].name : "?";
}

unsigned rsw_roce_ext_len(unsigned bit_index)
{
	return bit_index < RSW_EXT_COUNT ? ext_info[bit_index].len : 0;
}

static const char *const op_names[32] = {
	"SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_WITH_IMMEDIATE", "SEND_ONLY",
	"SEND_ONLY_WITH_IMMEDIATE", "RDMA_WRITE_FIRST", "RDMA_WRITE_MIDDLE", "RDMA_WRITE_LAST",
	"RDMA_WRITE_LAST_WITH_IMMEDIATE", "RDMA_WRITE_ONLY", "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
	"RDMA_READ_REQUEST", "RDMA_READ_RESPONSE_FIRST", "RDMA_READ_RESPONSE_MIDDLE",
	"RDMA_READ_RESPONSE_LAST", "RDMA_READ_RESPONSE_ONLY", "ACKNOWLEDGE", "ATOMIC_ACKNOWLEDGE",
	"COMPARE_SWAP", "FETCH_ADD", NULL, "SEND_LAST_WITH_INVALIDATE", "SEND_ONLY_WITH_INVALIDATE",
	NULL, NULL, NULL, NULL, "FLUSH", "ATOMIC_WRITE", NULL, NULL,
};

const char *rsw_roce_opcode_name(uint8_t opcode, char *buf, size_t len)
{
	static const char *const transport[4] = {"RC", "UC", "RD", "UD"};

	if (!(rsw_roce_opcode_ext[opcode] & RSW_OPC_VALID))
		snprintf(buf, len, "RESERVED");
	else if (opcode == RSW_OP_CNP)
		snprintf(buf, len, "CNP");
	else
		snprintf(buf, len, "%s_%s", transport[opcode >> 5], op_names[opcode & 0x1F]);
	return buf;
}
