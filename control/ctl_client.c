#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_client.h"

#define MAX_REPLY (4u << 20)

const char *rsw_ctl_socket_path(const char *arg)
{
	if (arg)
		return arg;
	const char *env = getenv("ROCESW_SOCKET");
	return env && *env ? env : RSW_CTL_DEFAULT_SOCKET;
}

json_t *rsw_ctl_call(const char *path, json_t *req, char *err, size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return NULL;
	}
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		snprintf(err, errlen, "%s: %s (is rocesw-dataplane running with --control-socket?)",
			 path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	struct timeval tv = {.tv_sec = 30};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	json_object_set_new(req, "v", json_integer(1));
	char *text = json_dumps(req, JSON_COMPACT);
	char *buf = malloc(MAX_REPLY + 1);
	json_t *result = NULL;
	ssize_t n = -1;
	if (text && buf && send(fd, text, strlen(text), MSG_NOSIGNAL) >= 0)
		n = recv(fd, buf, MAX_REPLY, 0);
	if (n <= 0) {
		snprintf(err, errlen, "%s: %s", path, n == 0 ? "the dataplane closed the connection"
							     : strerror(errno));
	} else {
		json_error_t je;
		json_t *reply = json_loadb(buf, (size_t)n, 0, &je);
		if (!reply) {
			snprintf(err, errlen, "%s: reply is not JSON: %s", path, je.text);
		} else if (!json_is_true(json_object_get(reply, "ok"))) {
			const char *e = json_string_value(json_object_get(reply, "error"));
			snprintf(err, errlen, "%s", e ? e : "error without a message");
		} else {
			result = json_incref(json_object_get(reply, "result"));
		}
		json_decref(reply);
	}
	free(text);
	free(buf);
	close(fd);
	return result;
}
