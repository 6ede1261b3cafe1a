// What Swift's Glibc module does not bring in: epoll and eventfd, which the stack's event
// loop waits on, and thread naming. Deliberately no logic here; everything else is Swift.
#ifndef CBLUEJAYSYSTEM_H
#define CBLUEJAYSYSTEM_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <pthread.h>

// glibc declares this only under _GNU_SOURCE; naming a thread makes it visible in
// /proc/PID/task/*/comm, top -H and gdb.
int pthread_setname_np(pthread_t thread, const char *name);

#endif
