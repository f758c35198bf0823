package io.switchml.dataplane;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.switchml.udp.UdpOffloads;

/** The Netty transport the switch ports run on: native epoll where Linux offers it, else NIO. */
enum UdpTransport {
    EPOLL {
        @Override
        IoHandlerFactory ioHandlerFactory() {
            return EpollIoHandler.newFactory();
        }

        @Override
        DatagramChannel newChannel(SocketProtocolFamily family) {
            return new EpollDatagramChannel(family);
        }

        @Override
        boolean segmentation() {
            return UdpOffloads.segmentationAvailable();
        }
    },
    NIO {
        @Override
        IoHandlerFactory ioHandlerFactory() {
            return NioIoHandler.newFactory();
        }

        @Override
        DatagramChannel newChannel(SocketProtocolFamily family) {
            return new NioDatagramChannel(family);
        }
    };

    abstract IoHandlerFactory ioHandlerFactory();

    abstract DatagramChannel newChannel(SocketProtocolFamily family);

    /** Whether its channels can send segmented datagrams (UDP GSO). */
    boolean segmentation() {
        return false;
    }

    /** Why {@link #segmentation()} is false, for the error of udpSegmentation=on. */
    String segmentationMissing() {
        return this == NIO ? "the switch runs on NIO, not the epoll transport" : UdpOffloads.segmentationMissing();
    }

    /** Epoll when {@code preferNative} and the native library loads, else NIO. */
    static UdpTransport select(boolean preferNative) {
        return preferNative && Epoll.isAvailable() ? EPOLL : NIO;
    }
}
