package io.switchml.control;

/** A controller's host and TCP port, parsed from {@code host:port} (IPv6 hosts in brackets). */
public record ControllerAddress(String host, int port) {
    public ControllerAddress {
        if (host.isEmpty()) {
            throw new IllegalArgumentException("controller host is empty");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("controller port " + port + " outside 1..65535");
        }
    }

    public static ControllerAddress parse(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            throw new IllegalArgumentException("controller address must be host:port, not '" + hostPort + "'");
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return new ControllerAddress(host, Integer.parseInt(hostPort.substring(colon + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("controller port in '" + hostPort + "' is not a number", e);
        }
    }

    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
