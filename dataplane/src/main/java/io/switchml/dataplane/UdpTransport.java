package io.switchml.dataplane;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.epoll.EpollChannelOption;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.socket.nio.NioDatagramChannel;

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
        void receiveInBatches(Bootstrap bootstrap, int maxDatagramBytes, int datagramsPerRead) {
            // recvmmsg: one system call fills a buffer of several datagrams, each handed on as a slice.
            bootstrap.option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, maxDatagramBytes)
                    .option(ChannelOption.RECVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(maxDatagramBytes * datagramsPerRead));
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

    /** Receive buffers for datagrams of up to {@code maxDatagramBytes}, several per system call where the transport can. */
    void receiveInBatches(Bootstrap bootstrap, int maxDatagramBytes, int datagramsPerRead) {
        bootstrap.option(ChannelOption.RECVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(maxDatagramBytes));
    }

    /** Epoll when {@code preferNative} and the native library loads, else NIO. */
    static UdpTransport select(boolean preferNative) {
        return preferNative && Epoll.isAvailable() ? EPOLL : NIO;
    }
}
