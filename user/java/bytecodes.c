// SPDX-License-Identifier: MIT
/* The opcode table of JVMS §6.5 and instruction lengths. */
#include "java/bytecodes.h"

#include "bundle.h"

const struct jbc_info jbc_table[256] = {
	[0x00] = { "nop", 1, JBC_OTHER },
	[0x01] = { "aconst_null", 1, JBC_OTHER },
	[0x02] = { "iconst_m1", 1, JBC_OTHER },
	[0x03] = { "iconst_0", 1, JBC_OTHER },
	[0x04] = { "iconst_1", 1, JBC_OTHER },
	[0x05] = { "iconst_2", 1, JBC_OTHER },
	[0x06] = { "iconst_3", 1, JBC_OTHER },
	[0x07] = { "iconst_4", 1, JBC_OTHER },
	[0x08] = { "iconst_5", 1, JBC_OTHER },
	[0x09] = { "lconst_0", 1, JBC_OTHER },
	[0x0a] = { "lconst_1", 1, JBC_OTHER },
	[0x0b] = { "fconst_0", 1, JBC_OTHER },
	[0x0c] = { "fconst_1", 1, JBC_OTHER },
	[0x0d] = { "fconst_2", 1, JBC_OTHER },
	[0x0e] = { "dconst_0", 1, JBC_OTHER },
	[0x0f] = { "dconst_1", 1, JBC_OTHER },
	[0x10] = { "bipush", 2, JBC_OTHER },
	[0x11] = { "sipush", 3, JBC_OTHER },
	[0x12] = { "ldc", 2, JBC_OTHER },
	[0x13] = { "ldc_w", 3, JBC_OTHER },
	[0x14] = { "ldc2_w", 3, JBC_OTHER },
	[0x15] = { "iload", 2, JBC_OTHER },
	[0x16] = { "lload", 2, JBC_OTHER },
	[0x17] = { "fload", 2, JBC_OTHER },
	[0x18] = { "dload", 2, JBC_OTHER },
	[0x19] = { "aload", 2, JBC_OTHER },
	[0x1a] = { "iload_0", 1, JBC_OTHER },
	[0x1b] = { "iload_1", 1, JBC_OTHER },
	[0x1c] = { "iload_2", 1, JBC_OTHER },
	[0x1d] = { "iload_3", 1, JBC_OTHER },
	[0x1e] = { "lload_0", 1, JBC_OTHER },
	[0x1f] = { "lload_1", 1, JBC_OTHER },
	[0x20] = { "lload_2", 1, JBC_OTHER },
	[0x21] = { "lload_3", 1, JBC_OTHER },
	[0x22] = { "fload_0", 1, JBC_OTHER },
	[0x23] = { "fload_1", 1, JBC_OTHER },
	[0x24] = { "fload_2", 1, JBC_OTHER },
	[0x25] = { "fload_3", 1, JBC_OTHER },
	[0x26] = { "dload_0", 1, JBC_OTHER },
	[0x27] = { "dload_1", 1, JBC_OTHER },
	[0x28] = { "dload_2", 1, JBC_OTHER },
	[0x29] = { "dload_3", 1, JBC_OTHER },
	[0x2a] = { "aload_0", 1, JBC_OTHER },
	[0x2b] = { "aload_1", 1, JBC_OTHER },
	[0x2c] = { "aload_2", 1, JBC_OTHER },
	[0x2d] = { "aload_3", 1, JBC_OTHER },
	[0x2e] = { "iaload", 1, JBC_OTHER },
	[0x2f] = { "laload", 1, JBC_OTHER },
	[0x30] = { "faload", 1, JBC_OTHER },
	[0x31] = { "daload", 1, JBC_OTHER },
	[0x32] = { "aaload", 1, JBC_OTHER },
	[0x33] = { "baload", 1, JBC_OTHER },
	[0x34] = { "caload", 1, JBC_OTHER },
	[0x35] = { "saload", 1, JBC_OTHER },
	[0x36] = { "istore", 2, JBC_OTHER },
	[0x37] = { "lstore", 2, JBC_OTHER },
	[0x38] = { "fstore", 2, JBC_OTHER },
	[0x39] = { "dstore", 2, JBC_OTHER },
	[0x3a] = { "astore", 2, JBC_OTHER },
	[0x3b] = { "istore_0", 1, JBC_OTHER },
	[0x3c] = { "istore_1", 1, JBC_OTHER },
	[0x3d] = { "istore_2", 1, JBC_OTHER },
	[0x3e] = { "istore_3", 1, JBC_OTHER },
	[0x3f] = { "lstore_0", 1, JBC_OTHER },
	[0x40] = { "lstore_1", 1, JBC_OTHER },
	[0x41] = { "lstore_2", 1, JBC_OTHER },
	[0x42] = { "lstore_3", 1, JBC_OTHER },
	[0x43] = { "fstore_0", 1, JBC_OTHER },
	[0x44] = { "fstore_1", 1, JBC_OTHER },
	[0x45] = { "fstore_2", 1, JBC_OTHER },
	[0x46] = { "fstore_3", 1, JBC_OTHER },
	[0x47] = { "dstore_0", 1, JBC_OTHER },
	[0x48] = { "dstore_1", 1, JBC_OTHER },
	[0x49] = { "dstore_2", 1, JBC_OTHER },
	[0x4a] = { "dstore_3", 1, JBC_OTHER },
	[0x4b] = { "astore_0", 1, JBC_OTHER },
	[0x4c] = { "astore_1", 1, JBC_OTHER },
	[0x4d] = { "astore_2", 1, JBC_OTHER },
	[0x4e] = { "astore_3", 1, JBC_OTHER },
	[0x4f] = { "iastore", 1, JBC_OTHER },
	[0x50] = { "lastore", 1, JBC_OTHER },
	[0x51] = { "fastore", 1, JBC_OTHER },
	[0x52] = { "dastore", 1, JBC_OTHER },
	[0x53] = { "aastore", 1, JBC_OTHER },
	[0x54] = { "bastore", 1, JBC_OTHER },
	[0x55] = { "castore", 1, JBC_OTHER },
	[0x56] = { "sastore", 1, JBC_OTHER },
	[0x57] = { "pop", 1, JBC_OTHER },
	[0x58] = { "pop2", 1, JBC_OTHER },
	[0x59] = { "dup", 1, JBC_OTHER },
	[0x5a] = { "dup_x1", 1, JBC_OTHER },
	[0x5b] = { "dup_x2", 1, JBC_OTHER },
	[0x5c] = { "dup2", 1, JBC_OTHER },
	[0x5d] = { "dup2_x1", 1, JBC_OTHER },
	[0x5e] = { "dup2_x2", 1, JBC_OTHER },
	[0x5f] = { "swap", 1, JBC_OTHER },
	[0x60] = { "iadd", 1, JBC_OTHER },
	[0x61] = { "ladd", 1, JBC_OTHER },
	[0x62] = { "fadd", 1, JBC_OTHER },
	[0x63] = { "dadd", 1, JBC_OTHER },
	[0x64] = { "isub", 1, JBC_OTHER },
	[0x65] = { "lsub", 1, JBC_OTHER },
	[0x66] = { "fsub", 1, JBC_OTHER },
	[0x67] = { "dsub", 1, JBC_OTHER },
	[0x68] = { "imul", 1, JBC_OTHER },
	[0x69] = { "lmul", 1, JBC_OTHER },
	[0x6a] = { "fmul", 1, JBC_OTHER },
	[0x6b] = { "dmul", 1, JBC_OTHER },
	[0x6c] = { "idiv", 1, JBC_OTHER },
	[0x6d] = { "ldiv", 1, JBC_OTHER },
	[0x6e] = { "fdiv", 1, JBC_OTHER },
	[0x6f] = { "ddiv", 1, JBC_OTHER },
	[0x70] = { "irem", 1, JBC_OTHER },
	[0x71] = { "lrem", 1, JBC_OTHER },
	[0x72] = { "frem", 1, JBC_OTHER },
	[0x73] = { "drem", 1, JBC_OTHER },
	[0x74] = { "ineg", 1, JBC_OTHER },
	[0x75] = { "lneg", 1, JBC_OTHER },
	[0x76] = { "fneg", 1, JBC_OTHER },
	[0x77] = { "dneg", 1, JBC_OTHER },
	[0x78] = { "ishl", 1, JBC_OTHER },
	[0x79] = { "lshl", 1, JBC_OTHER },
	[0x7a] = { "ishr", 1, JBC_OTHER },
	[0x7b] = { "lshr", 1, JBC_OTHER },
	[0x7c] = { "iushr", 1, JBC_OTHER },
	[0x7d] = { "lushr", 1, JBC_OTHER },
	[0x7e] = { "iand", 1, JBC_OTHER },
	[0x7f] = { "land", 1, JBC_OTHER },
	[0x80] = { "ior", 1, JBC_OTHER },
	[0x81] = { "lor", 1, JBC_OTHER },
	[0x82] = { "ixor", 1, JBC_OTHER },
	[0x83] = { "lxor", 1, JBC_OTHER },
	[0x84] = { "iinc", 3, JBC_OTHER },
	[0x85] = { "i2l", 1, JBC_OTHER },
	[0x86] = { "i2f", 1, JBC_OTHER },
	[0x87] = { "i2d", 1, JBC_OTHER },
	[0x88] = { "l2i", 1, JBC_OTHER },
	[0x89] = { "l2f", 1, JBC_OTHER },
	[0x8a] = { "l2d", 1, JBC_OTHER },
	[0x8b] = { "f2i", 1, JBC_OTHER },
	[0x8c] = { "f2l", 1, JBC_OTHER },
	[0x8d] = { "f2d", 1, JBC_OTHER },
	[0x8e] = { "d2i", 1, JBC_OTHER },
	[0x8f] = { "d2l", 1, JBC_OTHER },
	[0x90] = { "d2f", 1, JBC_OTHER },
	[0x91] = { "i2b", 1, JBC_OTHER },
	[0x92] = { "i2c", 1, JBC_OTHER },
	[0x93] = { "i2s", 1, JBC_OTHER },
	[0x94] = { "lcmp", 1, JBC_OTHER },
	[0x95] = { "fcmpl", 1, JBC_OTHER },
	[0x96] = { "fcmpg", 1, JBC_OTHER },
	[0x97] = { "dcmpl", 1, JBC_OTHER },
	[0x98] = { "dcmpg", 1, JBC_OTHER },
	[0x99] = { "ifeq", 3, JBC_COND_BRANCH },
	[0x9a] = { "ifne", 3, JBC_COND_BRANCH },
	[0x9b] = { "iflt", 3, JBC_COND_BRANCH },
	[0x9c] = { "ifge", 3, JBC_COND_BRANCH },
	[0x9d] = { "ifgt", 3, JBC_COND_BRANCH },
	[0x9e] = { "ifle", 3, JBC_COND_BRANCH },
	[0x9f] = { "if_icmpeq", 3, JBC_COND_BRANCH },
	[0xa0] = { "if_icmpne", 3, JBC_COND_BRANCH },
	[0xa1] = { "if_icmplt", 3, JBC_COND_BRANCH },
	[0xa2] = { "if_icmpge", 3, JBC_COND_BRANCH },
	[0xa3] = { "if_icmpgt", 3, JBC_COND_BRANCH },
	[0xa4] = { "if_icmple", 3, JBC_COND_BRANCH },
	[0xa5] = { "if_acmpeq", 3, JBC_COND_BRANCH },
	[0xa6] = { "if_acmpne", 3, JBC_COND_BRANCH },
	[0xa7] = { "goto", 3, JBC_GOTO },
	[0xa8] = { "jsr", 3, JBC_JSR },
	[0xa9] = { "ret", 2, JBC_RET },
	[0xaa] = { "tableswitch", 0, JBC_SWITCH },
	[0xab] = { "lookupswitch", 0, JBC_SWITCH },
	[0xac] = { "ireturn", 1, JBC_RETURN },
	[0xad] = { "lreturn", 1, JBC_RETURN },
	[0xae] = { "freturn", 1, JBC_RETURN },
	[0xaf] = { "dreturn", 1, JBC_RETURN },
	[0xb0] = { "areturn", 1, JBC_RETURN },
	[0xb1] = { "return", 1, JBC_RETURN },
	[0xb2] = { "getstatic", 3, JBC_OTHER },
	[0xb3] = { "putstatic", 3, JBC_OTHER },
	[0xb4] = { "getfield", 3, JBC_OTHER },
	[0xb5] = { "putfield", 3, JBC_OTHER },
	[0xb6] = { "invokevirtual", 3, JBC_INVOKE_VIRTUAL },
	[0xb7] = { "invokespecial", 3, JBC_INVOKE_SPECIAL },
	[0xb8] = { "invokestatic", 3, JBC_INVOKE_STATIC },
	[0xb9] = { "invokeinterface", 5, JBC_INVOKE_INTERFACE },
	[0xba] = { "invokedynamic", 5, JBC_INVOKE_DYNAMIC },
	[0xbb] = { "new", 3, JBC_OTHER },
	[0xbc] = { "newarray", 2, JBC_OTHER },
	[0xbd] = { "anewarray", 3, JBC_OTHER },
	[0xbe] = { "arraylength", 1, JBC_OTHER },
	[0xbf] = { "athrow", 1, JBC_ATHROW },
	[0xc0] = { "checkcast", 3, JBC_OTHER },
	[0xc1] = { "instanceof", 3, JBC_OTHER },
	[0xc2] = { "monitorenter", 1, JBC_OTHER },
	[0xc3] = { "monitorexit", 1, JBC_OTHER },
	[0xc4] = { "wide", 0, JBC_OTHER },
	[0xc5] = { "multianewarray", 4, JBC_OTHER },
	[0xc6] = { "ifnull", 3, JBC_COND_BRANCH },
	[0xc7] = { "ifnonnull", 3, JBC_COND_BRANCH },
	[0xc8] = { "goto_w", 5, JBC_GOTO },
	[0xc9] = { "jsr_w", 5, JBC_JSR },
	[0xca] = { "breakpoint", 1, JBC_OTHER },
	[0xfe] = { "impdep1", 1, JBC_OTHER },
	[0xff] = { "impdep2", 1, JBC_OTHER },
};

const struct jbc_info jbc_invalid = { NULL, 0, JBC_INVALID };

const char *jbc_name(uint8_t op)
{
	return jbc_table[op].name ? jbc_table[op].name : "invalid";
}

/* tableswitch/lookupswitch: opcode, 0-3 pad bytes to a 4-byte boundary,
 * then default, then low/high + offsets or npairs + pairs.  It reads
 * low, high and npairs itself, in 64 bits: it is the check that
 * jbc_switch_at assumes done. */
static int switch_length(const uint8_t *code, size_t len, size_t bci)
{
	size_t p = jbc_switch_operands(bci);
	if (p + 12 > len)
		return jpb_err_truncated;
	int64_t n;
	if (code[bci] == JBC_TABLESWITCH) {
		int64_t lo = jbc_be32(code + p + 4);
		int64_t hi = jbc_be32(code + p + 8);
		if (hi < lo)
			return jpb_err_corrupt;
		n = 12 + 4 * (hi - lo + 1);
	} else {
		int64_t npairs = jbc_be32(code + p + 4);
		if (npairs < 0)
			return jpb_err_corrupt;
		n = 8 + 8 * npairs;
	}
	if ((uint64_t)n > len - p)
		return jpb_err_truncated;
	return (int)(p + (size_t)n - bci);
}

int jbc_length_any(const uint8_t *code, size_t len, size_t bci)
{
	if (bci >= len)
		return jpb_err_invalid;
	uint8_t op = code[bci];
	const struct jbc_info *in = jbc_info(op);
	int n;
	if (in->kind == JBC_INVALID)
		return jpb_err_corrupt;
	if (op == JBC_TABLESWITCH || op == JBC_LOOKUPSWITCH)
		return switch_length(code, len, bci);
	if (op == JBC_WIDE) {
		if (bci + 1 >= len)
			return jpb_err_truncated;
		n = code[bci + 1] == 0x84 ? 6 : 4; /* wide iinc has a 2-byte const */
	} else {
		n = in->length;
	}
	if ((size_t)n > len - bci)
		return jpb_err_truncated;
	return n;
}

long jbc_branch_target(const uint8_t *code, size_t len, size_t bci)
{
	if (bci >= len)
		return -1;
	const struct jbc_info *in = jbc_info(code[bci]);
	if (in->kind != JBC_COND_BRANCH && in->kind != JBC_GOTO &&
	    in->kind != JBC_JSR)
		return -1;
	if (bci + in->length > len)
		return -1;
	long off;
	if (in->length == 5)
		off = jbc_be32(code + bci + 1);
	else
		off = (int16_t)(code[bci + 1] << 8 | code[bci + 2]);
	return (long)bci + off;
}
