/* Token usage from coding agents' own logs (docs/agents.md, "Tokens from agents'
 * logs"): Claude Code's stream-json output and OpenCode's JSON events, read into the
 * four token fields every sample of kgb carries (input, output, cache write, cache
 * read) and reasoning where the agent reports it.
 *
 * Claude Code (`claude -p --output-format stream-json`): a log holds one or more
 * sessions (a harness that restarts a killed agent appends the next attempt); a session
 * starts at a `system`/`init` event and ends at its `result` event. A session that
 * ended has the result's `usage` (the session's total). A session killed before its
 * result has the usage of its assistant messages, each message counted once however
 * many events repeat it (one per content block, each with the message's usage; the
 * largest value of each field is kept), messages of different ids summed (an API
 * retry is a new message, billed again). The sessions are summed.
 *
 * OpenCode (`opencode run --format json`): every `step_finish` event carries the
 * usage of one step in `part.tokens` (input, output, reasoning, cache.read,
 * cache.write); the steps are summed, each part id once.
 *
 * Versions: every `kgb verify --json` answer the agent read (Claude Code: a
 * tool_result of a user event; OpenCode: a tool part's output) ends a version of the
 * candidate, named by the answer's campaign id; a version's tokens are those of the
 * messages first seen since the previous answer (OpenCode: the steps finished since,
 * the step that ran the verify included). A session that ended gives the difference
 * between its result's usage and its messages' to the version it ended in, so the
 * versions and the tokens after the last answer sum to the log's usage.
 *
 * Lines that are not JSON objects (an agent's other output) are skipped and reported
 * with their file and line; a counted event whose usage is malformed is an error
 * naming the file, the line, the field and the value. */
#ifndef KGB_CLI_AGENTLOG_H
#define KGB_CLI_AGENTLOG_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
	KGB_AGENTLOG_CLAUDE = 0,    /* Claude Code stream-json (cc_output.jsonl) */
	KGB_AGENTLOG_OPENCODE,      /* OpenCode JSON events (oc_output.json) */
} kgb_agentlog_kind_t;

/* The token fields of one sample. */
typedef struct kgb_usage_counts {
	double input;
	double output;
	double cache_write;
	double cache_read;
	double reasoning;
	bool has_reasoning;         /* the agent reports reasoning tokens (OpenCode) */
} kgb_usage_t;

#define KGB_AGENTLOG_NOTES 8

/* One version of the candidate: an answer of `kgb verify --json` that the agent read
 * (a tool result holding its JSON), and the tokens spent since the previous one. */
typedef struct kgb_agentlog_version {
	unsigned long long campaign_id;   /* the verify's campaign */
	bool passed;
	kgb_usage_t usage;          /* the messages (steps) first seen after the previous
	                             * answer and up to this one */
} kgb_agentlog_version_t;

typedef struct kgb_agentlog {
	kgb_usage_t usage;
	unsigned sessions;          /* Claude: sessions seen; OpenCode: 1 */
	unsigned ended;             /* Claude: sessions whose usage is their result's */
	unsigned messages;          /* distinct assistant messages (Claude, killed
	                             * sessions) or steps (OpenCode) counted */
	unsigned skipped;           /* lines that are not JSON objects */
	char notes[KGB_AGENTLOG_NOTES][160];  /* the first skipped lines: "FILE:LINE: ..." */
	kgb_agentlog_version_t *versions;   /* in the order the agent read them (heap:
	                                     * kgb_agentlog_release) */
	size_t nversions;
	kgb_usage_t after;          /* the tokens after the last answer (all of them when
	                             * there is none); usage = the versions' + after */
} kgb_agentlog_t;

/* Free what kgb_agentlog_parse allocated in lg (its versions). */
void kgb_agentlog_release(kgb_agentlog_t *lg);

/* input + output + cache write + cache read: a candidate's tokens (reasoning is
 * reported apart and not added, as the manifest's "usage" counts it). */
double kgb_usage_total(const kgb_usage_t *u);

/* Read the log in text[0..len) (name: its file, for messages) into *out. Returns 0,
 * or -1 with err naming the file, the line, the field and the value. */
int kgb_agentlog_parse(const char *name, const char *text, size_t len, kgb_agentlog_kind_t kind,
                       kgb_agentlog_t *out, char *err, size_t errlen);

/* kgb_agentlog_parse of the file at path. */
int kgb_agentlog_read(const char *path, kgb_agentlog_kind_t kind, kgb_agentlog_t *out, char *err, size_t errlen);

#endif
