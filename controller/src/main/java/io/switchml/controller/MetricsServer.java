package io.switchml.controller;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A small HTTP(S) server for the metrics endpoint that connections which send nothing cannot stop:
 * Netty, one event-loop thread for every connection (an idle connection holds a socket and a few KB,
 * never a thread), a deadline for each request (its TLS handshake, request line and headers must
 * have arrived within {@code requestTimeout} of the connection or of the previous answer, or the
 * connection is closed), and at most {@code maxConnections} connections at once: one more evicts the
 * connection that has waited longest for its request (when none waits, the one whose answer has been
 * unread longest; an answer must be taken within 30 s), so a scraper's new connection, which sends
 * its request at once, is served while idle connections are held open and reopened as they drop.
 * Before, the JDK's server refused new connections once 16 were open, whatever they did: 16 idle
 * connections stopped every scrape, also before the handshake of an HTTPS endpoint with a token.
 *
 * <p>The handler runs on the event loop, once per whole request; nothing is logged per connection.
 */
final class MetricsServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetricsServer.class);
    /** Request line, and headers together: a scrape's are a few hundred bytes. */
    private static final int MAX_LINE_BYTES = 4096;
    private static final int MAX_HEADER_BYTES = 8192;
    /** A request's body: a scrape has none. */
    private static final int MAX_BODY_BYTES = 8192;
    /** How long an answer may take to be written out (read by the client) before the connection is closed. */
    private static final long RESPONSE_MILLIS = 30_000;

    private final EventLoopGroup group;
    private final Channel listener;
    /**
     * Connections waiting for a request, and those being answered (whose answer is not yet written), each
     * oldest first, and how many are open; touched on the event loop only.
     */
    private final Set<Channel> waiting = new LinkedHashSet<>();
    private final Set<Channel> answering = new LinkedHashSet<>();
    private int open;

    /**
     * Listens on {@code address}; {@code tls} null for plain HTTP. {@code handler} answers each whole
     * request (a failed decoding included: see {@link FullHttpRequest#decoderResult()}).
     *
     * @throws IOException when the address cannot be bound
     */
    MetricsServer(InetSocketAddress address, SslContext tls, Duration requestTimeout, int maxConnections,
                  Function<FullHttpRequest, FullHttpResponse> handler) throws IOException {
        long timeoutMillis = requestTimeout.toMillis();
        this.group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("switchml-metrics", true),
                NioIoHandler.newFactory());
        ServerBootstrap bootstrap = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 256)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        ChannelPipeline pipeline = channel.pipeline();
                        pipeline.addLast("deadline", new Deadline(timeoutMillis, maxConnections));
                        if (tls != null) {
                            SslHandler ssl = tls.newHandler(channel.alloc());
                            ssl.setHandshakeTimeoutMillis(timeoutMillis);
                            pipeline.addLast("tls", ssl);
                        }
                        pipeline.addLast("http", new HttpServerCodec(MAX_LINE_BYTES, MAX_HEADER_BYTES, MAX_BODY_BYTES));
                        pipeline.addLast("whole", new HttpObjectAggregator(MAX_BODY_BYTES));
                        pipeline.addLast("answer", new Answer(handler));
                    }
                });
        try {
            this.listener = bootstrap.bind(address).syncUninterruptibly().channel();
        } catch (Exception e) { // Netty rethrows the bind's IOException unchecked
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
        }
    }

    int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** Connections open now (read on the event loop). */
    int openConnections() {
        return group.next().submit(() -> open).syncUninterruptibly().getNow();
    }

    @Override
    public void close() {
        listener.close().syncUninterruptibly();
        group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).syncUninterruptibly();
    }

    /**
     * First in each connection's pipeline: counts it, evicts the longest-waiting connection beyond the
     * cap, and closes the connection when a request is not whole by its deadline.
     */
    private final class Deadline extends ChannelInboundHandlerAdapter {
        private final long timeoutMillis;
        private final int maxConnections;
        private ChannelHandlerContext context;
        private ScheduledFuture<?> timer;

        Deadline(long timeoutMillis, int maxConnections) {
            this.timeoutMillis = timeoutMillis;
            this.maxConnections = maxConnections;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.context = ctx;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            open++;
            if (open > maxConnections) {
                // The longest-waiting one goes; only when none waits, the one whose answer has been unread longest.
                Iterator<Channel> oldest = waiting.isEmpty() ? answering.iterator() : waiting.iterator();
                if (oldest.hasNext()) {
                    Channel evicted = oldest.next();
                    oldest.remove();
                    evicted.close();
                }
            }
            awaitRequest();
            ctx.fireChannelActive();
        }

        /** From now on a whole request must arrive within the timeout. */
        void awaitRequest() {
            Channel channel = context.channel();
            if (!channel.isActive()) {
                return;
            }
            answering.remove(channel);
            waiting.add(channel);
            closeIn(timeoutMillis);
        }

        /** A whole request arrived: its answer must be taken (written out) within the response time. */
        void requestArrived() {
            Channel channel = context.channel();
            waiting.remove(channel);
            if (channel.isActive()) {
                answering.add(channel);
                closeIn(RESPONSE_MILLIS);
            }
        }

        private void closeIn(long millis) {
            cancelTimer();
            timer = context.executor().schedule(() -> {
                context.close();
            }, millis, TimeUnit.MILLISECONDS);
        }

        private void cancelTimer() {
            if (timer != null) {
                timer.cancel(false);
                timer = null;
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            open--;
            waiting.remove(ctx.channel());
            answering.remove(ctx.channel());
            cancelTimer();
            ctx.fireChannelInactive();
        }
    }

    /** Last in the pipeline: answers a whole request, then waits for the next one or closes. */
    private static final class Answer extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final Function<FullHttpRequest, FullHttpResponse> handler;

        Answer(Function<FullHttpRequest, FullHttpResponse> handler) {
            this.handler = handler;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            Deadline deadline = (Deadline) ctx.pipeline().get("deadline");
            deadline.requestArrived();
            boolean keepAlive = request.decoderResult().isSuccess() && HttpUtil.isKeepAlive(request);
            FullHttpResponse response = handler.apply(request);
            HttpUtil.setKeepAlive(response, keepAlive);
            if (!keepAlive) {
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            ctx.writeAndFlush(response).addListener(written -> {
                if (written.isSuccess()) {
                    deadline.awaitRequest();
                } else {
                    ctx.close();
                }
            });
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // A reset, a refused handshake, a protocol error: the peer's business, not the log's.
            LOG.debug("metrics connection from {} closed: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        }
    }
}
