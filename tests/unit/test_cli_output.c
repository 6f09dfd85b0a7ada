/* Tests for cli/output.c: number formats, table alignment, progress bars, CSV quoting. */
#include <stdlib.h>
#include <string.h>

#include "../../cli/output.h"
#include "test.h"

TEST(cli_fmt_speedup)
{
	char b[32];
	ASSERT_EQ_STR(kgb_cli_fmt_speedup(1.4249, b, sizeof b), "1.42x");
	ASSERT_EQ_STR(kgb_cli_fmt_speedup(0.5, b, sizeof b), "0.50x");
	ASSERT_EQ_STR(kgb_cli_fmt_speedup(9.999, b, sizeof b), "10.0x");
	ASSERT_EQ_STR(kgb_cli_fmt_speedup(12.46, b, sizeof b), "12.5x");
	ASSERT_EQ_STR(kgb_cli_fmt_speedup(134.4, b, sizeof b), "134x");
	ASSERT_EQ_STR(kgb_cli_fmt_speedup(0, b, sizeof b), "-");
	ASSERT_EQ_STR(kgb_cli_fmt_speedup(-1, b, sizeof b), "-");
	ASSERT_EQ_STR(kgb_cli_fmt_speedup(1.0 / 0.0, b, sizeof b), "-");
}

TEST(cli_fmt_tokens)
{
	char b[32];
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(0, b, sizeof b), "0");
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(850, b, sizeof b), "850");
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(999.4, b, sizeof b), "999");
	/* 999.6 would print as "1000" unscaled: it must move to the next unit */
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(999.6, b, sizeof b), "1.0k");
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(1500, b, sizeof b), "1.5k");
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(12345, b, sizeof b), "12.3k");
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(123456, b, sizeof b), "123k");
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(999999, b, sizeof b), "1.0M");
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(4.56e6, b, sizeof b), "4.6M");
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(1.2e9, b, sizeof b), "1.2G");
	ASSERT_EQ_STR(kgb_cli_fmt_tokens(-3, b, sizeof b), "-");
}

TEST(cli_fmt_duration_ago_pct_ns)
{
	char b[32];
	ASSERT_EQ_STR(kgb_cli_fmt_duration(0.42, b, sizeof b), "0.42s");
	ASSERT_EQ_STR(kgb_cli_fmt_duration(12.34, b, sizeof b), "12.3s");
	ASSERT_EQ_STR(kgb_cli_fmt_duration(123, b, sizeof b), "2m03s");
	ASSERT_EQ_STR(kgb_cli_fmt_duration(3725, b, sizeof b), "1h02m");
	ASSERT_EQ_STR(kgb_cli_fmt_duration(-1, b, sizeof b), "-");
	ASSERT_EQ_STR(kgb_cli_fmt_ago(-1, b, sizeof b), "never");
	ASSERT_EQ_STR(kgb_cli_fmt_ago(400, b, sizeof b), "now");
	ASSERT_EQ_STR(kgb_cli_fmt_ago(3500, b, sizeof b), "3s ago");
	ASSERT_EQ_STR(kgb_cli_fmt_ago(125000, b, sizeof b), "2m ago");
	ASSERT_EQ_STR(kgb_cli_fmt_ago(5LL * 3600 * 1000, b, sizeof b), "5h ago");
	ASSERT_EQ_STR(kgb_cli_fmt_ago(3LL * 86400 * 1000, b, sizeof b), "3d ago");
	ASSERT_EQ_STR(kgb_cli_fmt_pct(21, 50, b, sizeof b), "42%");
	ASSERT_EQ_STR(kgb_cli_fmt_pct(1, 200, b, sizeof b), "0.5%");
	ASSERT_EQ_STR(kgb_cli_fmt_pct(7, 7, b, sizeof b), "100%");
	ASSERT_EQ_STR(kgb_cli_fmt_pct(0, 0, b, sizeof b), "-");
	ASSERT_EQ_STR(kgb_cli_fmt_ns(850, b, sizeof b), "850ns");
	ASSERT_EQ_STR(kgb_cli_fmt_ns(12345, b, sizeof b), "12.3us");
	ASSERT_EQ_STR(kgb_cli_fmt_ns(4.561e6, b, sizeof b), "4.56ms");
	ASSERT_EQ_STR(kgb_cli_fmt_ns(2.5e9, b, sizeof b), "2.50s");
	ASSERT_EQ_STR(kgb_cli_fmt_ns(0, b, sizeof b), "-");
}

TEST(cli_table_alignment)
{
	static const char *const hdr[] = { "NAME", "N", "NOTE" };
	kgb_cli_table_t *t = kgb_cli_table_new(3, hdr, "lrl");
	kgb_cli_table_cell(t, "add");
	kgb_cli_table_cell(t, "%d", 7);
	kgb_cli_table_cell(t, "x");
	kgb_cli_table_cell(t, "rms_norm");
	kgb_cli_table_cell(t, "%d", 1024);
	kgb_cli_table_cell(t, "%s", "");
	kgb_cli_table_cell(t, "µ-op");   /* 4 characters, 5 bytes */
	kgb_cli_table_cell(t, "%d", 12);
	ASSERT_EQ_INT(kgb_cli_table_rows(t), 3);
	char *s = kgb_cli_table_render(t);
	ASSERT_EQ_STR(s, "NAME         N  NOTE\n"
	                 "add          7  x\n"
	                 "rms_norm  1024\n"
	                 "µ-op        12\n");
	free(s);
	kgb_cli_table_destroy(&t);
	ASSERT_TRUE(t == NULL);
}

TEST(cli_table_cells_lose_newlines)
{
	static const char *const hdr[] = { "A", "B" };
	kgb_cli_table_t *t = kgb_cli_table_new(2, hdr, NULL);
	kgb_cli_table_cell(t, "line1\nline2");
	kgb_cli_table_cell(t, "tab\there");
	char *s = kgb_cli_table_render(t);
	ASSERT_EQ_STR(s, "A            B\nline1 line2  tab here\n");
	free(s);
	kgb_cli_table_destroy(&t);
}

TEST(cli_text_width_utf8)
{
	ASSERT_EQ_INT(kgb_cli_text_width(""), 0);
	ASSERT_EQ_INT(kgb_cli_text_width("abc"), 3);
	ASSERT_EQ_INT(kgb_cli_text_width("\xc3\xa9t\xc3\xa9"), 3);   /* été */
	ASSERT_EQ_INT(kgb_cli_text_width("\xe2\x96\x88x"), 2);       /* full block + x */
}

TEST(cli_progress_bar)
{
	char b[64];
	ASSERT_EQ_STR(kgb_cli_progress_bar(b, sizeof b, 10, 0, 0, 0, 0), "[..........]");
	ASSERT_EQ_STR(kgb_cli_progress_bar(b, sizeof b, 10, 5, 0, 0, 10), "[#####.....]");
	ASSERT_EQ_STR(kgb_cli_progress_bar(b, sizeof b, 10, 10, 0, 0, 10), "[##########]");
	ASSERT_EQ_STR(kgb_cli_progress_bar(b, sizeof b, 10, 4, 2, 2, 10), "[####!!>>..]");
	/* one failure in a thousand still shows */
	ASSERT_EQ_STR(kgb_cli_progress_bar(b, sizeof b, 10, 999, 1, 0, 1000), "[#########!]");
	/* counts above the total do not overflow the bar */
	ASSERT_EQ_STR(kgb_cli_progress_bar(b, sizeof b, 4, 9, 9, 9, 3), "[#!>.]");
	/* a buffer too small shrinks the bar instead of overflowing */
	char small[8];
	ASSERT_EQ_STR(kgb_cli_progress_bar(small, sizeof small, 30, 1, 0, 0, 1), "[#####]");
}

static void check_quote(const char *in, const char *want)
{
	char *q = kgb_cli_csv_quote(in);
	ASSERT_EQ_STR(q, want);
	free(q);
}

TEST(cli_csv_quoting)
{
	check_quote("plain", "plain");
	check_quote("", "");
	check_quote(NULL, "");
	check_quote("a,b", "\"a,b\"");
	check_quote("say \"hi\"", "\"say \"\"hi\"\"\"");
	check_quote("two\nlines", "\"two\nlines\"");
	check_quote("cr\rhere", "\"cr\rhere\"");
	check_quote(" lead", "\" lead\"");
	check_quote("trail ", "\"trail \"");
	check_quote("\"", "\"\"\"\"");
}

TEST(cli_csv_row)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *fields[] = { "add", "out[3] = 1, expected 2", NULL, "x\"y" };
	kgb_cli_csv_row(f, fields, 4);
	fclose(f);
	ASSERT_EQ_STR(buf, "add,\"out[3] = 1, expected 2\",,\"x\"\"y\"\n");
	free(buf);
}

TEST(cli_json_print)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *j = json_object();
	json_object_set_new(j, "b", json_integer(2));
	json_object_set_new(j, "a", json_string("x"));
	kgb_cli_json_print(f, j);
	fclose(f);
	/* insertion order is kept, output ends with a newline */
	ASSERT_EQ_STR(buf, "{\n  \"b\": 2,\n  \"a\": \"x\"\n}\n");
	free(buf);
}

/* CSV numbers: integers as integers (a median of 13840800 ns was printed 1.38408e+07),
 * other values exactly enough to read back the same double. */
TEST(cli_fmt_num)
{
	char b[48];
	ASSERT_EQ_STR(kgb_cli_fmt_num(13840800, b, sizeof b), "13840800");
	ASSERT_EQ_STR(kgb_cli_fmt_num(0, b, sizeof b), "0");
	ASSERT_EQ_STR(kgb_cli_fmt_num(-42, b, sizeof b), "-42");
	ASSERT_EQ_STR(kgb_cli_fmt_num(1.4249, b, sizeof b), "1.4249");
	ASSERT_EQ_STR(kgb_cli_fmt_num(0.1, b, sizeof b), "0.1");
	ASSERT_EQ_STR(kgb_cli_fmt_num(13840800.25, b, sizeof b), "13840800.25");
	double third = 1.0 / 3.0;
	ASSERT_TRUE(strtod(kgb_cli_fmt_num(third, b, sizeof b), NULL) == third);
	ASSERT_TRUE(strchr(kgb_cli_fmt_num(123456789012.0, b, sizeof b), 'e') == NULL);
	ASSERT_EQ_STR(kgb_cli_fmt_num(1.0 / 0.0, b, sizeof b), "");
}

static void assert_lines_within(const char *s, size_t w)
{
	for (const char *line = s; *line;) {
		const char *nl = strchr(line, '\n');
		ASSERT_TRUE(nl != NULL);
		char *one = strndup(line, (size_t)(nl - line));
		ASSERT_TRUE(kgb_cli_text_width(one) <= w);
		free(one);
		line = nl + 1;
	}
}

/* A table wider than the limit: free text ('w') wraps onto continuation lines, whole;
 * numbers and values are never cut, and no line is wider than the limit. */
TEST(cli_table_width_limit)
{
	static const char *const hdr[] = { "METHOD", "OPERATOR", "CASES", "FIRST FAILURE" };
	kgb_cli_table_t *t = kgb_cli_table_new(4, hdr, "llrw");
	char msg[300];
	memset(msg, 'x', sizeof msg - 1);
	msg[sizeof msg - 1] = '\0';
	memcpy(msg, "unknown type name 'T_other'", 27);
	kgb_cli_table_cell(t, "agent-b");
	kgb_cli_table_cell(t, "add");
	kgb_cli_table_cell(t, "123456/123456");
	kgb_cli_table_cell(t, "%s", msg);
	char *wide = kgb_cli_table_render(t);
	ASSERT_TRUE(strlen(strchr(wide, '\n') + 1) > 300);
	free(wide);
	char *s = kgb_cli_table_render_width(t, 80);
	assert_lines_within(s, 80);
	ASSERT_CONTAINS(s, "123456/123456");
	ASSERT_CONTAINS(s, "unknown type name");
	ASSERT_TRUE(strstr(s, "...") == NULL);
	/* every x of the message is there, over several lines */
	size_t xs = 0;
	for (const char *p = s; *p; p++)
		xs += *p == 'x';
	ASSERT_EQ_INT(xs, 300 - 1 - 27);
	free(s);
	/* a limit the table fits in changes nothing */
	char *same = kgb_cli_table_render_width(t, 1000), *plain = kgb_cli_table_render(t);
	ASSERT_EQ_STR(same, plain);
	free(same);
	free(plain);
	kgb_cli_table_destroy(&t);
}

/* At 80 columns, values a user types are never cut: a column with one value is said
 * once above the table, decoration ('d') is dropped, bracketed parts of 'A' columns
 * left out, and rows grouped under an 's' column's headings. */
TEST(cli_table_keeps_values)
{
	static const char *const hdr[] = { "METHOD", "OPERATOR", "PLATFORM", "VERDICT", "DEVICE", "SPEEDUP",
		                               "FIRST FAILURE" };
	kgb_cli_table_t *t = kgb_cli_table_new(7, hdr, "slslDAw");
	const char *plat[2] = { "opencl:pthread-intel-xeon-platinum-8480", "cuda:nvidia-h100-80gb-hbm3" };
	for (int r = 0; r < 6; r++) {
		kgb_cli_table_cell(t, "%s", r < 3 ? "agent-b-with-a-long-name" : "baseline (baseline)");
		kgb_cli_table_cell(t, "rotary_embedding_%d", r);
		kgb_cli_table_cell(t, "%s", plat[r % 2]);
		kgb_cli_table_cell(t, "%s", r % 2 ? "pass" : "compile_error");
		kgb_cli_table_cell(t, "NVIDIA H100 80GB HBM3 #%d", r);
		kgb_cli_table_cell(t, "1.4%dx [1.30-1.55] tie", r);
		kgb_cli_table_cell(t, "error: expected ';' before '}' token in kernel.cu line %d", r);
	}
	char *s = kgb_cli_table_render_width(t, 80);
	if (getenv("KGB_TEST_VERBOSE"))
		fputs(s, stderr);
	assert_lines_within(s, 80);
	ASSERT_CONTAINS(s, plat[0]);
	ASSERT_CONTAINS(s, plat[1]);
	ASSERT_CONTAINS(s, "compile_error");
	ASSERT_CONTAINS(s, "rotary_embedding_5");
	ASSERT_CONTAINS(s, "agent-b-with-a-long-name");
	ASSERT_TRUE(strstr(s, "...") == NULL);
	ASSERT_CONTAINS(s, "DEVICE");       /* named as left out, on the last line */
	ASSERT_TRUE(strstr(s, "NVIDIA H100") == NULL);
	ASSERT_CONTAINS(s, "1.42x tie");
	ASSERT_CONTAINS(s, "not shown: DEVICE");
	free(s);
	/* --wide: whole */
	kgb_cli_table_options(true, NULL);
	ASSERT_EQ_INT(kgb_cli_table_width(), 0);
	kgb_cli_table_options(false, NULL);
	kgb_cli_table_destroy(&t);
}

/* --csv: a listing's JSON document as CSV rows, nested objects as dotted columns. */
TEST(cli_json_to_csv)
{
	json_t *j = json_pack("{s:[{s:i,s:s,s:{s:b},s:[s,s]},{s:i,s:s,s:n}],s:s}", "campaigns", "id", 1, "name",
	                      "a,b", "live", "cuda", 1, "tags", "x", "y", "id", 2, "name", "c", "extra", "note", "n");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	kgb_cli_json_to_csv(f, j);
	fclose(f);
	ASSERT_EQ_STR(buf, "id,name,live.cuda,tags,extra\n1,\"a,b\",true,x;y,\n2,c,,,\n");
	free(buf);
	json_decref(j);
}

TEST(cli_suggest)
{
	static const char *const cmds[] = { "results", "report", "status", "workers", "platforms" };
	ASSERT_EQ_STR(kgb_cli_suggest("reslts", cmds, 5), "results");
	ASSERT_EQ_STR(kgb_cli_suggest("platfroms", cmds, 5), "platforms");
	ASSERT_EQ_STR(kgb_cli_suggest("work", cmds, 5), "workers");
	ASSERT_TRUE(kgb_cli_suggest("xyzzy", cmds, 5) == NULL);
}
