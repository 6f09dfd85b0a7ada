/* Readiness and status for a service manager (systemd's Type=notify, docs/deploy.md):
 * one datagram to the AF_UNIX socket named by NOTIFY_SOCKET, without libsystemd. */
#ifndef KGB_SDNOTIFY_H
#define KGB_SDNOTIFY_H

/* Send STATE ("READY=1", "STOPPING=1", "STATUS=...", newline-separated assignments) to
 * $NOTIFY_SOCKET: a path, or "@name" for the abstract namespace. Returns 1 when sent, 0
 * when NOTIFY_SOCKET is unset or empty (no service manager listens), -1 on an error
 * (errno set; a bad NOTIFY_SOCKET is EINVAL). */
int kgb_sd_notify(const char *state);

#endif
