/* kgb workers: the workers the coordinator knows, with their devices and how busy
 * each device is kept. */
#include "listing.h"

/* The load the worker reported for device index, or NULL. */
static const Kgb__DeviceLoad *load_of(const Kgb__WorkerInfo *w, uint32_t index)
{
	for (size_t i = 0; i < w->n_load; i++)
		if (w->load[i]->device_index == index)
			return w->load[i];
	return NULL;
}

/* "41% / 96% (NVML 95%)": kernels, then all event-timed device work, over the time the
 * device had work in about the last minute; "-" before any work. */
static const char *fmt_busy(const Kgb__DeviceLoad *l, char *buf, size_t len)
{
	if (!l || l->window_busy < 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	int n = snprintf(buf, len, "%.0f%%", 100.0 * l->window_busy);
	/* a worker that predates the occupied and NVML counters sends zeros: its line
	 * shows the kernel fraction and NVML's last sample */
	if (l->occupied_ms > 0 && l->window_occupied >= 0 && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " / %.0f%%", 100.0 * l->window_occupied);
	if (l->nvml_ms > 0 && l->window_nvml >= 0 && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " (NVML %.0f%%)", 100.0 * l->window_nvml);
	else if (l->nvml_util >= 0 && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " (NVML %.0f%%)", l->nvml_util);
	return buf;
}

static json_t *workers_json(const Kgb__WorkersReply *wr)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < wr->n_workers; i++) {
		const Kgb__WorkerInfo *w = wr->workers[i];
		json_t *o = json_object(), *devs = json_array();
		json_object_set_new(o, "id", json_string(w->worker_id ? w->worker_id : ""));
		json_object_set_new(o, "name", json_string(w->name ? w->name : ""));
		json_object_set_new(o, "hostname", json_string(w->hostname ? w->hostname : ""));
		json_object_set_new(o, "version", json_string(w->version ? w->version : ""));
		json_object_set_new(o, "alive", json_boolean(w->alive));
		json_object_set_new(o, "last_seen_ms_ago", json_integer(w->last_seen_ms_ago));
		json_object_set_new(o, "running_jobs", json_integer(w->running_jobs));
		json_object_set_new(o, "python", json_boolean(w->python));
		json_object_set_new(o, "python_note", json_string(w->python_note ? w->python_note : ""));
		json_object_set_new(o, "results_refused", json_integer(w->results_refused));
		json_object_set_new(o, "untrusted", json_boolean(w->untrusted));
		json_object_set_new(o, "drained", json_boolean(w->drained));
		json_object_set_new(o, "native", json_boolean(w->native));
		json_object_set_new(o, "native_note", json_string(w->native_note ? w->native_note : ""));
		for (size_t j = 0; j < w->n_devices; j++) {
			const Kgb__Device *d = w->devices[j];
			json_t *dj = json_object();
			json_object_set_new(dj, "index", json_integer(d->index));
			json_object_set_new(dj, "backend", json_string(d->backend ? d->backend : ""));
			json_object_set_new(dj, "name", json_string(d->name ? d->name : ""));
			json_object_set_new(dj, "arch", json_string(d->arch ? d->arch : ""));
			json_object_set_new(dj, "platform", json_string(d->platform ? d->platform : ""));
			json_object_set_new(dj, "memory_bytes", json_integer((json_int_t)d->memory_bytes));
			json_object_set_new(dj, "driver_version", json_string(d->driver_version ? d->driver_version : ""));
			json_object_set_new(dj, "compute_units", json_integer(d->compute_units));
			json_object_set_new(dj, "slots", json_integer(d->slots));
			const Kgb__DeviceLoad *l = load_of(w, d->index);
			if (l) {
				json_t *lj = json_object();
				json_object_set_new(lj, "device_ms", json_real(l->device_ms));
				json_object_set_new(lj, "active_ms", json_real(l->active_ms));
				json_object_set_new(lj, "busy", l->window_busy >= 0 ? json_real(l->window_busy) : json_null());
				json_object_set_new(lj, "nvml_util", l->nvml_util >= 0 ? json_real(l->nvml_util) : json_null());
				json_object_set_new(lj, "occupied_ms", json_real(l->occupied_ms));
				json_object_set_new(lj, "occupied", l->window_occupied >= 0 ? json_real(l->window_occupied) : json_null());
				json_object_set_new(lj, "nvml_ms", json_real(l->nvml_ms));
				json_object_set_new(lj, "nvml", l->window_nvml >= 0 ? json_real(l->window_nvml) : json_null());
				json_object_set_new(lj, "jobs", json_integer((json_int_t)l->jobs));
				if (l->phases) {
					/* the finished jobs' phases, summed (docs/worker.md) */
					/* and their profile (the p_* fields, cache counts): every field by name */
					json_t *pj = json_object();
					const ProtobufCMessageDescriptor *pd = &kgb__job_phases__descriptor;
					for (unsigned f = 0; f < pd->n_fields; f++) {
						const char *at = (const char *)l->phases + pd->fields[f].offset;
						if (pd->fields[f].type == PROTOBUF_C_TYPE_DOUBLE)
							json_object_set_new(pj, pd->fields[f].name, json_real(*(const double *)at));
						else if (pd->fields[f].type == PROTOBUF_C_TYPE_UINT64)
							json_object_set_new(pj, pd->fields[f].name, json_integer((json_int_t) * (const uint64_t *)at));
					}
					json_object_set_new(lj, "phases", pj);
				}
				json_object_set_new(dj, "load", lj);
			}
			json_array_append_new(devs, dj);
		}
		json_object_set_new(o, "devices", devs);
		json_array_append_new(arr, o);
	}
	return kgb_cli_listing_json("workers", arr);
}

/* kgb workers [--json]. */
int kgb_cli_cmd_workers(int argc, char **argv, kgb_cli_global_t *g)
{
	static const kgb_cli_listing_t listing = {
		.name = "workers",
		.summary = "List the workers the coordinator knows: id, name, host, whether it is alive,\n"
		           "when it was last heard from, its devices (one line each: backend, device\n"
		           "name, platform, BUSY: the device's kernel time, then all its event-timed\n"
		           "work (kernels, restores and cache flushes between timed samples), over\n"
		           "the time it had work in about the last minute, with NVML's utilisation\n"
		           "over the same time where available) and the jobs it is running; then\n"
		           "per live worker whether it records Python candidates, and why not, and\n"
		           "per worker the results refused as senseless (it then gets no more jobs).",
		.json_help = "print the workers as JSON",
		.request = KGB__ENVELOPE__BODY_WORKERS,
		.reply = KGB__ENVELOPE__BODY_WORKERS_REPLY,
	};
	Kgb__WorkersRequest req = KGB__WORKERS_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT, *reply = NULL;
	bool json;
	env.workers = &req;
	int rc = kgb_cli_listing_fetch(&listing, argc, argv, g, &env, &json, &reply);
	if (rc != KGB_CLI_OK || !reply)
		return rc;
	const Kgb__WorkersReply *wr = reply->workers_reply;
	if (json) {
		kgb_cli_json_print(stdout, workers_json(wr));
	} else if (wr->n_workers == 0) {
		printf("no workers\n");
	} else {
		static const char *const hdr[] = { "ID", "NAME", "HOST", "ALIVE", "LAST SEEN", "JOBS",
			                               "BACKEND", "DEVICE", "PLATFORM", "BUSY" };
		kgb_cli_table_t *t = kgb_cli_table_new(10, hdr, "lldlDrddlD");
		char ago[32], busy[64];
		unsigned alive = 0;
		for (size_t i = 0; i < wr->n_workers; i++) {
			const Kgb__WorkerInfo *w = wr->workers[i];
			alive += w->alive;
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(w->worker_id, "?"));
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(w->name, "-"));
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(w->hostname, "-"));
			kgb_cli_table_cell(t, "%s", w->alive ? "yes" : "no");
			kgb_cli_table_cell(t, "%s", kgb_cli_fmt_ago(w->last_seen_ms_ago, ago, sizeof ago));
			kgb_cli_table_cell(t, "%u", w->running_jobs);
			if (w->n_devices == 0) {
				kgb_cli_table_cell(t, "-");
				kgb_cli_table_cell(t, "(no devices)");
				kgb_cli_table_cell(t, "%s", "");
				kgb_cli_table_cell(t, "%s", "");
			}
			for (size_t j = 0; j < w->n_devices; j++) {
				const Kgb__Device *d = w->devices[j];
				if (j > 0)
					for (int k = 0; k < 6; k++)
						kgb_cli_table_cell(t, "%s", "");
				kgb_cli_table_cell(t, "%s", kgb_cli_str_or(d->backend, "?"));
				kgb_cli_table_cell(t, "%s", kgb_cli_str_or(d->name, "?"));
				kgb_cli_table_cell(t, "%s", kgb_cli_str_or(d->platform, "?"));
				kgb_cli_table_cell(t, "%s", fmt_busy(load_of(w, d->index), busy, sizeof busy));
			}
		}
		kgb_cli_listing_table(t);
		printf("%zu workers, %u alive\n", wr->n_workers, alive);
		for (size_t i = 0; i < wr->n_workers; i++)
			if (wr->workers[i]->alive)
				printf("%s python candidates: %s (%s)\n", kgb_cli_str_or(wr->workers[i]->name, "?"),
				       wr->workers[i]->python ? "recorded" : "not recorded",
				       kgb_cli_str_or(wr->workers[i]->python_note, "no reason given"));
		for (size_t i = 0; i < wr->n_workers; i++)
			if (wr->workers[i]->drained)
				printf("%s: drained: no new job goes to it (kgb worker resume %s)\n",
				       kgb_cli_str_or(wr->workers[i]->name, "?"), kgb_cli_str_or(wr->workers[i]->name, "?"));
		for (size_t i = 0; i < wr->n_workers; i++)
			if (wr->workers[i]->results_refused)
				printf("%s: %u result(s) refused as senseless%s (docs/security.md)\n",
				       kgb_cli_str_or(wr->workers[i]->name, "?"), wr->workers[i]->results_refused,
				       wr->workers[i]->untrusted ? "; it gets no more jobs" : "");
	}
	if (!json)
		printf("coordinator %s: cluster %s\n", g->endpoint,
		       reply->cluster_id && *reply->cluster_id ? reply->cluster_id : "(not given)");
	kgb_wire_free(reply);
	return KGB_CLI_OK;
}
