// OpenSSL (Debian's libssl-dev): TLS for the gateway's mqtts:// connections, over memory BIOs
// (MQTTTransport.swift: the socket's reads and writes stay the gateway's own).
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
