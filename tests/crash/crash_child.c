/*
 * crash_child.c — one check in a child process (crash_child.h).
 */
#define _GNU_SOURCE
#include "crash_child.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common_log.h"

bool crash_child_run(crash_child_fn fn, void *ctx, char *const *exec_argv, void *out, size_t len,
                     int *status) {
    int fds[2];
    if (pipe(fds) != 0) abort();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        if (exec_argv) {
            if (dup2(fds[1], STDOUT_FILENO) < 0) _exit(4);
            execv("/proc/self/exe", exec_argv);
            _exit(127);
        }
        memset(out, 0, len);
        fl_log_set_level((enum fl_log_level)(FL_LOG_ERROR + 1)); /* recovery warnings are expected */
        fn(ctx, out);
        ssize_t w = write(fds[1], out, len);
        _exit(w == (ssize_t)len ? 0 : 3);
    }
    close(fds[1]);
    memset(out, 0, len);
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fds[0], (char *)out + got, len - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fds[0]);
    *status = 0;
    waitpid(pid, status, 0);
    return got == len && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
}

int crash_scratch_dir(const char *prefix, char *base, size_t cap) {
    struct stat shm;
    bool use_shm = stat("/dev/shm", &shm) == 0 && S_ISDIR(shm.st_mode) &&
                   access("/dev/shm", W_OK) == 0;
    snprintf(base, cap, "%s/%s-XXXXXX", use_shm ? "/dev/shm" : "/tmp", prefix);
    return mkdtemp(base) ? 0 : -1;
}

void crash_report(const char *line, const char *ledger) {
    printf("%s\n", line);
    if (!ledger) return;
    FILE *f = fopen(ledger, "a");
    if (f) {
        fprintf(f, "%s\n", line);
        fclose(f);
    }
}
