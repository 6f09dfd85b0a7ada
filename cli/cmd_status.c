/* kgb status [ID] [--watch]: progress per campaign and platform. */
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "output.h"
#include "util.h"

#define BAR_WIDTH 16

static bool is_terminal_state(const char *s)
{
	return s && (strcmp(s, "done") == 0 || strcmp(s, "cancelled") == 0 || strcmp(s, "failed") == 0);
}

static const char *str_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

/* Jobs that ran to an end (passed, kernel failures, infrastructure failures): the
 * share of the work done. Cancelled jobs are not work done, so a campaign cancelled at
 * 40% stays at 40%. */
static uint32_t finished(const Kgb__PlatformProgress *p)
{
	return p->done + p->failed;
}

/* Done jobs whose every case passed. */
static uint32_t passed(const Kgb__PlatformProgress *p)
{
	uint32_t bad = p->kernel_failed + p->unsupported;
	return p->done >= bad ? p->done - bad : 0;
}

/* Infrastructure failures: the worker side failed (retries spent), or its environment
 * could not run the candidate's kind (unsupported: no torch, no NVRTC, ...). */
static uint32_t infra(const Kgb__PlatformProgress *p)
{
	return p->failed + p->unsupported;
}

/* The state shown: "held" for an open campaign on hold (kgb hold). */
static const char *state_of(const Kgb__CampaignStatus *cs)
{
	return cs->held && !is_terminal_state(cs->state) ? "held" : str_or(cs->state, "?");
}

static void campaign_totals(const Kgb__CampaignStatus *cs, uint32_t *fin, uint32_t *open, uint32_t *total)
{
	*fin = *open = *total = 0;
	for (size_t j = 0; j < cs->n_platforms; j++) {
		*fin += finished(cs->platforms[j]);
		*open += cs->platforms[j]->queued + cs->platforms[j]->running;
		*total += cs->platforms[j]->total;
	}
}

/* Seconds until the campaign's open jobs are done at the rate jobs have finished since
 * it started; -1 when unknown (not started, nothing finished yet, or not open). */
static double eta_seconds(const Kgb__CampaignStatus *cs, time_t now)
{
	uint32_t fin, open, total;
	campaign_totals(cs, &fin, &open, &total);
	if (cs->started_unix <= 0 || fin == 0 || open == 0 || is_terminal_state(cs->state))
		return -1;
	double elapsed = (double)(now - cs->started_unix);
	if (elapsed <= 0)
		return -1;
	return elapsed * open / fin;
}

static const char *fmt_time(int64_t unix_s, char *buf, size_t n)
{
	return kgb_cli_fmt_local(unix_s, "%Y-%m-%d %H:%M:%S", buf, n);
}

/* The lines under the table: owner and times, ETA, why jobs wait, whether the
 * campaign can progress. */
static void print_notes(const Kgb__StatusReply *sr, FILE *f, bool brief)
{
	time_t now = time(NULL);
	for (size_t i = 0; i < sr->n_campaigns; i++) {
		const Kgb__CampaignStatus *cs = sr->campaigns[i];
		char t1[32], t2[32], t3[32], eta[32];
		double e = eta_seconds(cs, now);
		/* watching: only what changes the picture (ETA, waits, stalls) */
		if (brief && e >= 0)
			fprintf(f, "campaign %llu: ETA %s\n", (unsigned long long)cs->id,
			        kgb_cli_fmt_duration(e, eta, sizeof eta));
		if (!brief)
			fprintf(f, "campaign %llu: owner %s, submitted %s, started %s, ended %s%s%s%s\n",
			        (unsigned long long)cs->id, str_or(cs->owner, "-"), fmt_time(cs->created_unix, t1, sizeof t1),
			        fmt_time(cs->started_unix, t2, sizeof t2), fmt_time(cs->finished_unix, t3, sizeof t3),
			        e >= 0 ? ", ETA " : "", e >= 0 ? kgb_cli_fmt_duration(e, eta, sizeof eta) : "",
			        cs->partial ? ", partial (a case selection: not a benchmark result)" : "");
		if (!brief && cs->held && !is_terminal_state(cs->state))
			fprintf(f, "  held: its queued jobs get no worker until `kgb release %llu`\n", (unsigned long long)cs->id);
		if (!brief && cs->parent_campaign_id)
			fprintf(f, "  re-runs campaign %llu\n", (unsigned long long)cs->parent_campaign_id);
		for (size_t j = 0; j < cs->n_platforms; j++) {
			const Kgb__PlatformProgress *p = cs->platforms[j];
			if (p->waiting && *p->waiting && p->total == 0)
				fprintf(f, "  platform %s: %s\n", str_or(p->platform, "?"), p->waiting);
			else if (p->waiting && *p->waiting)
				fprintf(f, "  %u jobs wait on %s: %s\n", p->queued, str_or(p->platform, "?"), p->waiting);
		}
		if (cs->stalled)
			fprintf(f, "  campaign %llu cannot progress: %s. Start a worker for it, or end those jobs with "
			           "`kgb cancel %llu --platform P` or `kgb drain %llu`\n",
			        (unsigned long long)cs->id, str_or(cs->stalled_reason, "no live worker"),
			        (unsigned long long)cs->id, (unsigned long long)cs->id);
	}
}

/* Ask for the status of campaign id (0: all). Returns 0 and *reply, or an exit code
 * with err set. A StatusReply carrying an error, or no campaign when one was asked for,
 * is a refusal. */
static int fetch_status(kgb_cli_client_t *c, uint64_t id, Kgb__Envelope **reply, char *err,
                        size_t errlen)
{
	Kgb__StatusRequest req = KGB__STATUS_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;

	req.campaign_id = id;
	env.body_case = KGB__ENVELOPE__BODY_STATUS;
	env.status = &req;
	int rc = kgb_cli_client_call(c, &env, KGB__ENVELOPE__BODY_STATUS_REPLY, reply, err, errlen);
	if (rc != 0)
		return rc;
	const Kgb__StatusReply *sr = (*reply)->status_reply;
	if (!sr || (sr->error && *sr->error) || (id != 0 && sr->n_campaigns == 0)) {
		if (sr && sr->error && *sr->error)
			kgb_err(err, errlen, "%s", sr->error);
		else
			kgb_err(err, errlen, "campaign %llu not found", (unsigned long long)id);
		kgb_wire_free(*reply);
		*reply = NULL;
		return KGB_CLI_EXIT_REFUSED;
	}
	return 0;
}

/* The status as a table; with bars, a PROGRESS column. Caller destroys. */
static kgb_cli_table_t *status_table(const Kgb__StatusReply *sr, bool bars)
{
	/* K-FAIL: done jobs with a kernel failure; I-FAIL: infrastructure failures. The
	 * progress column is right-aligned so that a narrow terminal never cuts it. */
	static const char *const hdr[] = { "ID", "NAME", "STATE", "PLATFORM", "QUEUED", "RUNNING",
		                               "PASSED", "K-FAIL", "I-FAIL", "CANCELLED", "TOTAL", "PROGRESS" };
	int ncols = bars ? 12 : 11;
	kgb_cli_table_t *t = kgb_cli_table_new(ncols, hdr, "lllarrrrrDrr");

	for (size_t i = 0; i < sr->n_campaigns; i++) {
		const Kgb__CampaignStatus *cs = sr->campaigns[i];
		if (cs->n_platforms == 0) {
			kgb_cli_table_cell(t, "%llu", (unsigned long long)cs->id);
			kgb_cli_table_cell(t, "%s", str_or(cs->name, "-"));
			kgb_cli_table_cell(t, "%s", state_of(cs));
			kgb_cli_table_cell(t, "(no platform yet)");
			for (int k = 4; k < ncols; k++)
				kgb_cli_table_cell(t, "%s", k == 11 ? "" : "-");
			continue;
		}
		for (size_t j = 0; j < cs->n_platforms; j++) {
			const Kgb__PlatformProgress *p = cs->platforms[j];
			if (j == 0)
				kgb_cli_table_cell(t, "%llu", (unsigned long long)cs->id);
			else
				kgb_cli_table_cell(t, "%s", "");
			kgb_cli_table_cell(t, "%s", j == 0 ? str_or(cs->name, "-") : "");
			kgb_cli_table_cell(t, "%s", j == 0 ? state_of(cs) : "");
			kgb_cli_table_cell(t, "%s%s", str_or(p->platform, "?"),
			                   p->total == 0 && p->waiting && *p->waiting ? " (no worker yet)" : "");
			kgb_cli_table_cell(t, "%u", p->queued);
			kgb_cli_table_cell(t, "%u", p->running);
			kgb_cli_table_cell(t, "%u", passed(p));
			kgb_cli_table_cell(t, "%u", p->kernel_failed);
			kgb_cli_table_cell(t, "%u", infra(p));
			kgb_cli_table_cell(t, "%u", p->cancelled);
			kgb_cli_table_cell(t, "%u", p->total);
			if (bars) {
				char bar[BAR_WIDTH + 8], pct[16];
				kgb_cli_progress_bar(bar, sizeof bar, BAR_WIDTH, passed(p), p->kernel_failed + infra(p),
				                     p->running, p->total);
				kgb_cli_table_cell(t, "%s %s", bar, kgb_cli_fmt_pct(finished(p), p->total, pct, sizeof pct));
			}
		}
	}
	return t;
}

static json_t *status_json(const Kgb__StatusReply *sr)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < sr->n_campaigns; i++) {
		const Kgb__CampaignStatus *cs = sr->campaigns[i];
		json_t *c = json_object(), *plats = json_array();
		json_object_set_new(c, "id", json_integer((json_int_t)cs->id));
		json_object_set_new(c, "name", json_string(cs->name ? cs->name : ""));
		json_object_set_new(c, "state", json_string(cs->state ? cs->state : ""));
		json_object_set_new(c, "created_unix", json_integer(cs->created_unix));
		json_object_set_new(c, "owner", json_string(cs->owner ? cs->owner : ""));
		json_object_set_new(c, "started_unix", cs->started_unix > 0 ? json_integer(cs->started_unix) : json_null());
		json_object_set_new(c, "finished_unix", cs->finished_unix > 0 ? json_integer(cs->finished_unix) : json_null());
		json_object_set_new(c, "partial", json_boolean(cs->partial));
		json_object_set_new(c, "held", json_boolean(cs->held));
		if (cs->parent_campaign_id)
			json_object_set_new(c, "rerun_of", json_integer((json_int_t)cs->parent_campaign_id));
		double eta = eta_seconds(cs, time(NULL));
		json_object_set_new(c, "eta_seconds", eta >= 0 ? json_integer((json_int_t)eta) : json_null());
		json_object_set_new(c, "stalled", json_boolean(cs->stalled));
		if (cs->stalled)
			json_object_set_new(c, "stalled_reason", json_string(cs->stalled_reason ? cs->stalled_reason : ""));
		for (size_t j = 0; j < cs->n_platforms; j++) {
			const Kgb__PlatformProgress *p = cs->platforms[j];
			json_t *o = json_object();
			json_object_set_new(o, "platform", json_string(p->platform ? p->platform : ""));
			json_object_set_new(o, "queued", json_integer(p->queued));
			json_object_set_new(o, "running", json_integer(p->running));
			json_object_set_new(o, "done", json_integer(p->done));
			json_object_set_new(o, "passed", json_integer(passed(p)));
			json_object_set_new(o, "kernel_failed", json_integer(p->kernel_failed));
			json_object_set_new(o, "infra_failed", json_integer(p->failed));
			json_object_set_new(o, "unsupported", json_integer(p->unsupported));
			json_object_set_new(o, "cancelled", json_integer(p->cancelled));
			json_object_set_new(o, "total", json_integer(p->total));
			json_object_set_new(o, "live", json_boolean(p->live));
			if (p->waiting && *p->waiting)
				json_object_set_new(o, "waiting", json_string(p->waiting));
			json_array_append_new(plats, o);
		}
		json_object_set_new(c, "platforms", plats);
		json_array_append_new(arr, c);
	}
	json_t *root = json_object();
	json_object_set_new(root, "campaigns", arr);
	return root;
}

static bool all_terminal(const Kgb__StatusReply *sr)
{
	for (size_t i = 0; i < sr->n_campaigns; i++)
		if (!is_terminal_state(sr->campaigns[i]->state))
			return false;
	return true;
}

/* Every campaign is finished or cannot progress (and at least one cannot). */
static bool all_stuck(const Kgb__StatusReply *sr)
{
	bool any = false;
	for (size_t i = 0; i < sr->n_campaigns; i++) {
		if (is_terminal_state(sr->campaigns[i]->state))
			continue;
		if (!sr->campaigns[i]->stalled)
			return false;
		any = true;
	}
	return any;
}

/* What plain watch mode remembers between updates: the last line printed per
 * (campaign, platform), so that only changes are printed. */
typedef struct seen {
	char **keys, **lines;
	size_t n, cap;
} seen_t;

static bool seen_update(seen_t *s, const char *key, const char *line)
{
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->keys[i], key) == 0) {
			if (strcmp(s->lines[i], line) == 0)
				return false;
			free(s->lines[i]);
			s->lines[i] = kgb_xstrdup(line);
			return true;
		}
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->keys = kgb_xrealloc(s->keys, s->cap * sizeof *s->keys);
		s->lines = kgb_xrealloc(s->lines, s->cap * sizeof *s->lines);
	}
	s->keys[s->n] = kgb_xstrdup(key);
	s->lines[s->n] = kgb_xstrdup(line);
	s->n++;
	return true;
}

static void seen_release(seen_t *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->keys[i]);
		free(s->lines[i]);
	}
	free(s->keys);
	free(s->lines);
}

/* Plain watch output: one line per platform whose counts changed, and one per campaign
 * whose state changed. */
static void print_changes(const Kgb__StatusReply *sr, seen_t *seen, FILE *f)
{
	for (size_t i = 0; i < sr->n_campaigns; i++) {
		const Kgb__CampaignStatus *cs = sr->campaigns[i];
		char key[64], pct[16];
		snprintf(key, sizeof key, "%llu", (unsigned long long)cs->id);
		for (size_t j = 0; j < cs->n_platforms; j++) {
			const Kgb__PlatformProgress *p = cs->platforms[j];
			char *k = kgb_xasprintf("%s/%s", key, str_or(p->platform, "?"));
			char *line = kgb_xasprintf("campaign %s %s: queued %u running %u passed %u kernel-failed %u "
			                           "infra-failed %u cancelled %u total %u (%s)%s%s",
			                           key, str_or(p->platform, "?"), p->queued, p->running, passed(p),
			                           p->kernel_failed, infra(p), p->cancelled, p->total,
			                           kgb_cli_fmt_pct(finished(p), p->total, pct, sizeof pct),
			                           p->waiting && *p->waiting ? ": " : "", p->waiting ? p->waiting : "");
			if (seen_update(seen, k, line))
				fprintf(f, "%s\n", line);
			free(k);
			free(line);
		}
		char *line = kgb_xasprintf("campaign %s %s: %s", key, str_or(cs->name, "-"), state_of(cs));
		if (seen_update(seen, key, line))
			fprintf(f, "%s\n", line);
		free(line);
	}
	fflush(f);
}

/* Terminal rows that text takes: lines wider than the terminal wrap. */
static int screen_lines(const char *text)
{
	struct winsize ws;
	size_t cols = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 0;
	int rows = 0;
	const char *line = text;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *one = kgb_xasprintf("%.*s", (int)len, line);
		size_t w = kgb_cli_text_width(one);
		free(one);
		rows += cols && w > cols ? (int)((w + cols - 1) / cols) : 1;
		if (!nl)
			break;
		line = nl + 1;
	}
	return rows;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Watch campaign id (0: every campaign) until it is done or cancelled; see cli.h. */
int kgb_cli_status_watch(kgb_cli_global_t *g, uint64_t id, double interval_s)
{
	char err[512];
	bool tty = isatty(STDOUT_FILENO);
	kgb_cli_client_t *c = kgb_cli_client_new(g->endpoint, g->timeout_s, err, sizeof err);
	seen_t seen = { 0 };
	int prev_lines = 0;
	double last_ok = kgb_now_ms();
	/* a coordinator that restarts is waited for, up to this long without any reply */
	double patience_ms = KGB_MAX(30.0, 3.0 * g->timeout_s) * 1000.0;
	bool got_one = false;
	int rc = KGB_CLI_OK;
	int stuck_polls = 0;

	if (!c) {
		fprintf(stderr, "kgb status: %s\n", err);
		return KGB_CLI_EXIT_USAGE;
	}
	for (;;) {
		Kgb__Envelope *reply = NULL;
		rc = fetch_status(c, id, &reply, err, sizeof err);
		if (rc == KGB_CLI_EXIT_NOCOORD && got_one && kgb_now_ms() - last_ok < patience_ms) {
			fprintf(stderr, "kgb status: %s (retrying)\n", err);
			continue;
		}
		if (rc != 0) {
			fprintf(stderr, "kgb status: %s\n", err);
			break;
		}
		got_one = true;
		last_ok = kgb_now_ms();
		const Kgb__StatusReply *sr = reply->status_reply;
		if (tty) {
			kgb_cli_table_t *t = status_table(sr, true);
			char *tab = kgb_cli_table_render_fit(t);
			char *notes = NULL;
			size_t nlen = 0;
			FILE *nf = open_memstream(&notes, &nlen);
			print_notes(sr, nf, true);
			fclose(nf);
			char *s = kgb_xasprintf("%s%s", tab, notes);
			free(tab);
			free(notes);
			if (prev_lines > 0)
				printf("\033[%dF\033[J", prev_lines);
			fputs(s, stdout);
			fflush(stdout);
			prev_lines = screen_lines(s);
			free(s);
			kgb_cli_table_destroy(&t);
		} else {
			print_changes(sr, &seen, stdout);
		}
		bool end = all_terminal(sr);
		/* stuck twice in a row: a worker that restarts has had an interval to return */
		stuck_polls = all_stuck(sr) ? stuck_polls + 1 : 0;
		if (!end && stuck_polls >= 2) {
			for (size_t i = 0; i < sr->n_campaigns; i++) {
				const Kgb__CampaignStatus *cs = sr->campaigns[i];
				if (cs->stalled)
					printf("campaign %llu cannot progress: %s; watch ends. Start a worker for it, or end "
					       "those jobs with `kgb cancel %llu --platform P` or `kgb drain %llu`\n",
					       (unsigned long long)cs->id, str_or(cs->stalled_reason, "no live worker"),
					       (unsigned long long)cs->id, (unsigned long long)cs->id);
			}
			fflush(stdout);
			rc = KGB_CLI_EXIT_STALLED;
			kgb_wire_free(reply);
			break;
		}
		if (end) {
			/* a cancelled campaign did not finish: say so, and let scripts tell */
			for (size_t i = 0; i < sr->n_campaigns; i++) {
				const Kgb__CampaignStatus *cs = sr->campaigns[i];
				if (strcmp(cs->state, "cancelled") != 0)
					continue;
				uint64_t ran = 0, total = 0;
				for (size_t k = 0; k < cs->n_platforms; k++) {
					const Kgb__PlatformProgress *pp = cs->platforms[k];
					ran += pp->done + pp->failed;
					total += pp->total;
				}
				printf("campaign %llu was cancelled: %llu of %llu jobs had run; its results are incomplete\n",
				       (unsigned long long)cs->id, (unsigned long long)ran, (unsigned long long)total);
				rc = KGB_CLI_EXIT_CANCELLED;
			}
			fflush(stdout);
			kgb_wire_free(reply);
			break;
		}
		kgb_wire_free(reply);
		sleep_s(interval_s);
	}
	seen_release(&seen);
	kgb_cli_client_destroy(&c);
	return rc;
}

/* Without an id, which campaigns are listed: --state S (queued, running, held, done,
 * cancelled, active: queued, running or held; all), by default the active ones and
 * those that ended within RECENT_S. */
#define RECENT_S (24 * 3600)
static const char *const STATES[] = { "queued", "running", "held", "done", "cancelled", "active", "all" };

static bool listed(const Kgb__CampaignStatus *cs, const char *state, time_t now)
{
	const char *st = state_of(cs);
	bool open = !is_terminal_state(cs->state);
	if (!state)
		return open || cs->finished_unix <= 0 || now - cs->finished_unix <= RECENT_S;
	if (strcmp(state, "all") == 0)
		return true;
	if (strcmp(state, "active") == 0)
		return open;
	return strcmp(st, state) == 0;
}

/* kgb status [ID] [--watch] [--interval S] [--json]. */
int kgb_cli_cmd_status(int argc, char **argv, kgb_cli_global_t *g)
{
	bool watch = false, json = false, all = false;
	double interval = 1.0;
	const char *state = NULL;
	const kgb_cli_opt_t opts[] = {
		{ "state", 's', KGB_CLI_OPT_STRING, &state, "S",
		  "without ID: campaigns in state S: queued, running, held, done, cancelled, active (queued, running "
		  "or held), all" },
		{ "all", 'a', KGB_CLI_OPT_FLAG, &all, NULL, "without ID: every campaign (as --state all)" },
		{ "watch", 'w', KGB_CLI_OPT_FLAG, &watch, NULL, "follow progress until the campaign is done or cancelled" },
		{ "interval", 0, KGB_CLI_OPT_DOUBLE, &interval, "S", "seconds between updates (default 1)" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "print the status as JSON (not with --watch)" },
	};
	const kgb_cli_spec_t spec = {
		.name = "status",
		.usage = "[ID] [--watch] [--interval S] [--json] [--state S | --all]",
		.summary = "Show the jobs of a campaign (or of every campaign) per platform: queued,\n"
		           "running, passed (every case passed), kernel-fail (a case's kernel failed),\n"
		           "infra-fail (the worker side failed, retries spent, or its environment\n"
		           "cannot run the candidate's kind: unsupported), cancelled, total; then\n"
		           "owner, times, ETA, and why jobs wait (no live worker for a platform).\n"
		           "Without ID: the active campaigns (queued, running, held) and those that\n"
		           "ended in the last 24 hours; --state S or --all for others.\n"
		           "With --watch, update until the campaign is done or cancelled, or cannot\n"
		           "progress (exit 4): progress bars redrawn in place on a terminal, otherwise\n"
		           "one plain line per change.",
		KGB_CLI_OPTS(opts),
		.min_pos = 0,
		.max_pos = 1,
	};
	char *pos[1];
	int npos = 0;
	char err[512];
	uint64_t id = 0;

	int rc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, &id, 1);
	if (rc >= 0)
		return rc;
	bool known = !state;
	for (size_t i = 0; state && i < KGB_ARRAY_LEN(STATES); i++)
		known |= strcmp(state, STATES[i]) == 0;
	if (!known || ((state || all) && npos == 1)) {
		fprintf(stderr, "kgb status: --state: %s\n",
		        !known ? "not one of queued, running, held, done, cancelled, active, all"
		               : "--state and --all list campaigns: not with an ID");
		return KGB_CLI_EXIT_USAGE;
	}
	if (all)
		state = "all";
	if (interval <= 0 || (watch && json)) {
		fprintf(stderr, "kgb status: %s\n", interval <= 0 ? "option --interval: must be greater than 0"
		                                                  : "--json and --watch cannot be combined");
		return KGB_CLI_EXIT_USAGE;
	}
	if (watch)
		return kgb_cli_status_watch(g, id, interval);

	kgb_cli_client_t *c = kgb_cli_client_new(g->endpoint, g->timeout_s, err, sizeof err);
	Kgb__Envelope *reply = NULL;
	if (!c) {
		fprintf(stderr, "kgb status: %s\n", err);
		return KGB_CLI_EXIT_USAGE;
	}
	rc = fetch_status(c, id, &reply, err, sizeof err);
	kgb_cli_client_destroy(&c);
	if (rc != 0) {
		fprintf(stderr, "kgb status: %s\n", err);
		return rc;
	}
	Kgb__StatusReply *sr = reply->status_reply;
	/* the campaigns listed, in place of the reply's for printing (restored before the
	 * reply is freed) */
	Kgb__CampaignStatus **every = sr->campaigns, **shown = kgb_xcalloc(sr->n_campaigns + 1, sizeof *shown);
	size_t nevery = sr->n_campaigns, nshown = 0;
	time_t now = time(NULL);
	for (size_t i = 0; i < nevery; i++)
		if (id || listed(every[i], state, now))
			shown[nshown++] = every[i];
	sr->campaigns = shown;
	sr->n_campaigns = nshown;
	if (json) {
		kgb_cli_json_print(stdout, status_json(sr));
	} else if (sr->n_campaigns == 0) {
		printf("no campaigns%s%s%s\n", state ? " in state " : "", state ? state : "",
		       nevery && !state ? " active or ended in the last 24 hours (kgb status --all lists every one)" : "");
	} else {
		kgb_cli_table_t *t = status_table(sr, isatty(STDOUT_FILENO));
		kgb_cli_table_print(t, stdout);
		kgb_cli_table_destroy(&t);
		char *notes = NULL;
		size_t nlen = 0;
		FILE *nf = open_memstream(&notes, &nlen);
		print_notes(sr, nf, false);
		if (!id && !state && nshown < nevery)
			fprintf(nf, "%zu campaign(s) that ended over 24 hours ago not shown: kgb status --all, or --state done\n",
			        nevery - nshown);
		fclose(nf);
		kgb_cli_print_wrapped(stdout, notes);
		free(notes);
	}
	sr->campaigns = every;
	sr->n_campaigns = nevery;
	free(shown);
	kgb_wire_free(reply);
	return KGB_CLI_OK;
}
