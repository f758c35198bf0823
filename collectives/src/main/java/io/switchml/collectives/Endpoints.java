package io.switchml.collectives;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/** Parses endpoint lists as configurations and command lines write them: {@code host:port,host:port,...}. */
public final class Endpoints {
    private Endpoints() {
    }

    /** A comma-separated list of {@code host:port} ({@code [v6addr]:port} for IPv6), in rank order. */
    public static List<InetSocketAddress> parse(String list) {
        List<InetSocketAddress> endpoints = new ArrayList<>();
        if (list == null || list.isBlank()) {
            return endpoints;
        }
        for (String item : list.split(",")) {
            endpoints.add(parseOne(item.trim()));
        }
        return endpoints;
    }

    public static InetSocketAddress parseOne(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            throw new IllegalArgumentException("endpoint '" + hostPort + "' is not host:port");
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("endpoint '" + hostPort + "' has no numeric port", e);
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("endpoint '" + hostPort + "': port outside 1..65535");
        }
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("endpoint '" + hostPort + "': cannot resolve host '" + host + "'");
        }
        return address;
    }

    /** The inverse of {@link #parse}. */
    public static String format(List<InetSocketAddress> endpoints) {
        StringBuilder s = new StringBuilder();
        for (InetSocketAddress a : endpoints) {
            String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
            s.append(s.length() == 0 ? "" : ",").append(host.contains(":") ? "[" + host + "]" : host).append(':').append(a.getPort());
        }
        return s.toString();
    }
}
