/* commands.h - the subcommands of `pocket-tts`; each lives in tools/cmd_<name>.c and is listed
 * in the table of tools/main.c. A command returns the process exit status (0 ok, 1 error,
 * 2 usage). */
#ifndef PTTS_COMMANDS_H
#define PTTS_COMMANDS_H

typedef struct tool_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *summary;
} tool_command;

int cmd_generate(int argc, char **argv);
int cmd_export_voice(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_fill(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_download(int argc, char **argv);
int cmd_voices(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_wyoming(int argc, char **argv);
int cmd_devices(int argc, char **argv);

#endif
