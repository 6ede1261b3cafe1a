// libmosquitto (Debian's libmosquitto-dev), the MQTT client the gateway uses.
#include <mosquitto.h>
