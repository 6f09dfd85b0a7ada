/* kgb-worker run --dump: one case's inputs, reference and output on disk; see dump.h. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dtype.h"
#include "dump.h"
#include "util.h"

static int write_file(const char *dir, const char *name, const void *p, size_t n, char *err, size_t errlen)
{
	char path[4400];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f) {
		snprintf(err, errlen, "dump: cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	size_t w = n ? fwrite(p, 1, n, f) : 0;
	if (fclose(f) != 0 || w != n) {
		snprintf(err, errlen, "dump: cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static const char *role_name(kgb_role_t r)
{
	return r == KGB_ROLE_IN ? "in" : r == KGB_ROLE_OUT ? "out" : "inout";
}

static json_t *int_array(const int64_t *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

/* A double for JSON: non-finite values become strings ("nan", "inf", "-inf"). */
static json_t *num(double v)
{
	if (v != v)
		return json_string("nan");
	if (v > 1.7976931348623157e308)
		return json_string("inf");
	if (v < -1.7976931348623157e308)
		return json_string("-inf");
	return json_real(v);
}

/* See dump.h. */
int kgb_case_dump(const char *dir, const kgb_dump_case_t *d, char *err, size_t errlen)
{
	const kgb_case_t *c = d->c;
	char sub[4096], name[256];
	int rc = -1;
	json_t *doc = NULL;
	double *f64 = NULL;

	snprintf(sub, sizeof sub, "%s/case-%u", dir, c->index);
	if (mkdir(sub, 0755) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "dump: cannot create %s: %s", sub, strerror(errno));
		return -1;
	}
	doc = json_pack("{s:s, s:I, s:s, s:I, s:s, s:s, s:o, s:o, s:o, s:o, s:s}", "op", c->op->name, "case",
	                (json_int_t)c->index, "label", c->label, "seed", (json_int_t)d->seed, "verdict",
	                d->verdict ? d->verdict : "", "message", d->message ? d->message : "", "max_abs_err",
	                num(d->max_abs_err), "max_rel_err", num(d->max_rel_err), "rtol", num(c->rtol), "atol_rel",
	                num(c->atol_rel), "byte_order", "little");
	if (!doc) {
		snprintf(err, errlen, "dump: cannot describe case %u", c->index);
		return -1;
	}
	json_t *scalars = json_object();
	for (int i = 0; i < c->nscalars; i++) {
		json_t *s = json_object();
		json_object_set_new(s, "dtype", json_string(kgb_dtype_name(c->s[i].dtype)));
		json_object_set_new(s, "value", num(c->s[i].value));
		json_object_set_new(scalars, c->s[i].name, s);
	}
	json_object_set_new(doc, "scalars", scalars);
	json_t *tensors = json_array();
	json_object_set_new(doc, "tensors", tensors);
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		size_t comps = t->storage * (size_t)kgb_dtype_lanes(t->dtype);
		json_t *o = json_object(), *files = json_object();
		json_array_append_new(tensors, o);        /* owned by doc from here on */
		json_object_set_new(o, "files", files);
		json_object_set_new(o, "name", json_string(t->name));
		json_object_set_new(o, "role", json_string(role_name(t->role)));
		json_object_set_new(o, "dtype", json_string(kgb_dtype_name(t->dtype)));
		json_object_set_new(o, "element_bytes", json_integer((json_int_t)kgb_dtype_size(t->dtype)));
		json_object_set_new(o, "shape", int_array(t->shape, t->ndim));
		json_object_set_new(o, "strides", int_array(t->stride, t->ndim));
		json_object_set_new(o, "numel", json_integer((json_int_t)t->numel));
		json_object_set_new(o, "storage", json_integer((json_int_t)t->storage));
		json_object_set_new(o, "bytes", json_integer((json_int_t)d->bytes[i]));
		if (d->input[i]) {
			snprintf(name, sizeof name, "%s.input.bin", t->name);
			if (write_file(sub, name, d->input[i], d->bytes[i], err, errlen) != 0)
				goto out;
			json_object_set_new(files, "input", json_string(name));
		}
		if (d->output[i]) {
			snprintf(name, sizeof name, "%s.output.bin", t->name);
			if (write_file(sub, name, d->output[i], d->bytes[i], err, errlen) != 0)
				goto out;
			json_object_set_new(files, "output", json_string(name));
			/* the same values as float64, for tools that do not know the dtype */
			f64 = kgb_xcalloc(comps + 1, sizeof *f64);
			for (size_t k = 0; k < comps; k++)
				f64[k] = kgb_dtype_load(t->dtype, d->output[i], k);
			snprintf(name, sizeof name, "%s.output.f64", t->name);
			if (write_file(sub, name, f64, comps * sizeof *f64, err, errlen) != 0)
				goto out;
			json_object_set_new(files, "output_f64", json_string(name));
			free(f64);
			f64 = NULL;
		}
		if (t->role != KGB_ROLE_IN && d->ref && i < d->ref->n && d->ref->v[i]) {
			snprintf(name, sizeof name, "%s.reference.f64", t->name);
			if (write_file(sub, name, d->ref->v[i], comps * sizeof(double), err, errlen) != 0)
				goto out;
			json_object_set_new(files, "reference_f64", json_string(name));
		}
	}
	char jpath[4200];
	snprintf(jpath, sizeof jpath, "%s/case.json", sub);
	if (json_dump_file(doc, jpath, JSON_INDENT(2)) != 0) {
		snprintf(err, errlen, "dump: cannot write %s: %s", jpath, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(f64);
	json_decref(doc);
	return rc;
}
