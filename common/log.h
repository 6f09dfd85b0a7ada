/* Logging: one module, one line per event, level checked before the arguments are
 * evaluated. Lines look like
 *   2026-12-02T15:20:01.123Z coordinator INFO job=17 worker=w-3 lease expired, requeued
 * Structured fields are plain key=value words at the start of the message. */
#ifndef KGB_LOG_H
#define KGB_LOG_H

typedef enum { KGB_LOG_ERROR = 0, KGB_LOG_WARN, KGB_LOG_INFO, KGB_LOG_DEBUG } kgb_log_level_t;

extern kgb_log_level_t kgb_log_threshold;

/* Set the daemon's ident ("coordinator", "worker") and the level; level from the
 * KGB_LOG_LEVEL environment variable (error|warn|info|debug) when level_name is NULL. */
void kgb_log_init(const char *ident, const char *level_name);
void kgb_log_write(kgb_log_level_t lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define KGB_LOG(lvl, ...)                                                       \
	do {                                                                        \
		if ((lvl) <= kgb_log_threshold)                                         \
			kgb_log_write((lvl), __VA_ARGS__);                                  \
	} while (0)
#define log_error(...) KGB_LOG(KGB_LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  KGB_LOG(KGB_LOG_WARN, __VA_ARGS__)
#define log_info(...)  KGB_LOG(KGB_LOG_INFO, __VA_ARGS__)
#define log_debug(...) KGB_LOG(KGB_LOG_DEBUG, __VA_ARGS__)

#endif
