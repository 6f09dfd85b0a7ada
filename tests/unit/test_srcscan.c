/* A kernel source may make its compiler read no file but itself (common/srcscan.c). */
#include <string.h>

#include "srcscan.h"
#include "test.h"

static int chk(const char *src, kgb_lang_t lang, char *err)
{
	err[0] = 0;
	return kgb_src_check(src, strlen(src), lang, "k.cl", err, 512);
}

TEST(srcscan_refuses_includes)
{
	char err[512];
	ASSERT_EQ_INT(chk("__kernel void f(__global float *o) { o[0] = 1; }\n", KGB_LANG_OPENCL, err), 0);
	ASSERT_EQ_INT(chk("#include \"/etc/hostname\"\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_CONTAINS(err, "k.cl: line 1: #include \"/etc/hostname\" refused");
	ASSERT_EQ_INT(chk("int a;\n  #  include \"../../x.cl\"\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_CONTAINS(err, "line 2");
	ASSERT_EQ_INT(chk("#include <stdio.h>\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_EQ_INT(chk("#define F \"/etc/passwd\"\n#include F\n", KGB_LANG_OPENCL, err), -1);
	/* spellings the preprocessor accepts: splices, comments, digraphs */
	ASSERT_EQ_INT(chk("#inc\\\nlude \"/etc/hostname\"\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_CONTAINS(err, "line 1");
	ASSERT_EQ_INT(chk("/**/#/**/include \"/etc/hostname\"\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_EQ_INT(chk("%:include \"/etc/hostname\"\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_EQ_INT(chk("?\?=include \"/etc/hostname\"\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_EQ_INT(chk("#include_next <x.h>\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_EQ_INT(chk("#import \"x\"\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_EQ_INT(chk("#embed \"/etc/hostname\"\n", KGB_LANG_OPENCL, err), -1);
	/* existence probes */
	ASSERT_EQ_INT(chk("#if __has_include(\"/etc/x\")\n#endif\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_CONTAINS(err, "__has_include is not allowed");
	/* token pasting and conditionals stay allowed (examples/aten use them) */
	ASSERT_EQ_INT(chk("#define C(a,b) a##b\n#if 1\nint C(x,y);\n#endif\n", KGB_LANG_OPENCL, err), 0);
	ASSERT_EQ_INT(chk("#pragma GCC dependency \"/etc/passwd\"\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_EQ_INT(chk("#pragma unroll\n#if 1\n#endif\n", KGB_LANG_OPENCL, err), 0);
}

TEST(srcscan_cuda_toolkit_headers)
{
	char err[512];
	ASSERT_EQ_INT(chk("#include <cuda_fp16.h>\n#include <cooperative_groups.h>\n", KGB_LANG_CUDA, err), 0);
	ASSERT_EQ_INT(chk("#include <cuda_fp16.h>\n", KGB_LANG_OPENCL, err), -1);
	ASSERT_EQ_INT(chk("#include </etc/hostname>\n", KGB_LANG_CUDA, err), -1);
	ASSERT_EQ_INT(chk("#include <../../../etc/hostname>\n", KGB_LANG_CUDA, err), -1);
	ASSERT_EQ_INT(chk("#include \"cuda_fp16.h\"\n", KGB_LANG_CUDA, err), -1);
	ASSERT_CONTAINS(err, "toolkit's own headers");
	ASSERT_EQ_INT(chk("#include <hip/hip_fp16.h>\n", KGB_LANG_HIP, err), 0);
	ASSERT_EQ_INT(chk("#include <stdio.h>\n", KGB_LANG_HIP, err), -1);
	/* Triton and binaries are not preprocessed by these compilers */
	ASSERT_EQ_INT(chk("#include \"/etc/hostname\"\n", KGB_LANG_TRITON, err), 0);
}

TEST(srcscan_opencl_options)
{
	char err[512];
	ASSERT_EQ_INT(kgb_src_check_ocl_options("-cl-std=CL2.0 -cl-fast-relaxed-math -D N=4 -DM=2 -w", err, sizeof err), 0);
	ASSERT_EQ_INT(kgb_src_check_ocl_options(NULL, err, sizeof err), 0);
	ASSERT_EQ_INT(kgb_src_check_ocl_options("-I/etc", err, sizeof err), -1);
	ASSERT_CONTAINS(err, "'-I/etc' not allowed");
	ASSERT_EQ_INT(kgb_src_check_ocl_options("-include /etc/hostname", err, sizeof err), -1);
	ASSERT_EQ_INT(kgb_src_check_ocl_options("-D", err, sizeof err), -1);
	ASSERT_EQ_INT(kgb_src_check_ocl_options("-D -I/etc", err, sizeof err), -1);
	ASSERT_EQ_INT(kgb_src_check_ocl_options("@/tmp/opts", err, sizeof err), -1);
}
