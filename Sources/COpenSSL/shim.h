// libmosquitto (Debian's libmosquitto-dev), the MQTT client the gateway uses.
#include <mosquitto.h>
// The gateway's own network thread for it (MQTTLoop.swift): its wake-up and its corked writes.
#include <sys/eventfd.h>
#include <netinet/tcp.h>
