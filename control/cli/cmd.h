#ifndef RSW_CMD_H
#define RSW_CMD_H

int rsw_cmd_inspect(int argc, char **argv);
int rsw_cmd_check_config(int argc, char **argv);
int rsw_cmd_hash(int argc, char **argv);
int rsw_cmd_hash_explain(int argc, char **argv);
int rsw_cmd_hash_export(int argc, char **argv);
int rsw_cmd_gen(int argc, char **argv);
int rsw_cmd_replay(int argc, char **argv);
int rsw_cmd_show(int argc, char **argv);
int rsw_cmd_set(int argc, char **argv);
int rsw_cmd_del(int argc, char **argv);
int rsw_cmd_report(int argc, char **argv);
int rsw_cmd_reload(int argc, char **argv);
int rsw_cmd_send(int argc, char **argv);
int rsw_cmd_te(int argc, char **argv);
int rsw_cmd_trace(int argc, char **argv);
int rsw_cmd_clear(int argc, char **argv);

#include <jansson.h>
/* `show trace`'s text (cmd_trace.c). */
void rsw_print_trace(json_t *r);

#endif
