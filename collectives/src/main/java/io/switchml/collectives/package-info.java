/**
 * Baselines behind the worker library's {@link io.switchml.api.AllReduce} interface, so that
 * benchmarks and training code compare in-network aggregation with the usual algorithms in one run
 * and switch between them by name ({@link io.switchml.collectives.Collectives#open}):
 * <ul>
 *   <li>{@code ring}: {@link io.switchml.collectives.RingAllReduce}, reduce-scatter then all-gather
 *       around the ring of workers, pipelined in segments, as Gloo's ring;</li>
 *   <li>{@code ps}: {@link io.switchml.collectives.ParameterServerAllReduce}, workers push shards to
 *       {@link io.switchml.collectives.ParameterServer}s (in the workers' processes or separate), which
 *       sum them and send the sums back, as BytePS;</li>
 *   <li>{@code topk} and {@code qsgd}: {@link io.switchml.collectives.CompressedAllReduce}, gradient
 *       compression (top-k with error feedback, QSGD's stochastic quantization) whose messages are
 *       exchanged by all-gather around the ring, settings in {@link io.switchml.collectives.Compression}.</li>
 * </ul>
 *
 * <p>All are exact and deterministic: every rank gets bit-identical results, which
 * {@link io.switchml.collectives.RingReference}, {@link io.switchml.collectives.ParameterServerReference},
 * {@link io.switchml.collectives.TopKReference} and {@link io.switchml.collectives.QsgdReference}
 * compute locally (the compressed ones: the sum of the compressed tensors). Every instance counts the
 * bytes it sends ({@link io.switchml.collectives.BytesSent}). int32 sums wrap like Java's int; MEAN is one float division by n (int32: Java's
 * integer division) applied once to each finished sum.
 *
 * <p>Layers, one concern per file: the transport ({@link io.switchml.collectives.Listener},
 * {@code Link}, {@code Poller}, {@code PeerConnector}, {@code Handshake}: non-blocking TCP driven by one
 * thread per instance, every wait under a deadline); the messages ({@code Hello},
 * {@code MessageHeader}, {@code RemoteError}); the shared pieces ({@code TcpCollective},
 * {@code OperationQueue}, {@code ControlOperations} for barrier and broadcast, {@code Partition},
 * {@code ElementType}, {@code Operand}, {@code WorkBuffer}); and the algorithms.
 *
 * <p>Wire protocol (TCP, big-endian headers, little-endian tensor data): each connection starts with
 * a 24-byte hello from both ends (magic "SWML", version, role, rank or server index, workers,
 * servers); between two workers the higher rank dials. Then 20-byte {@code MessageHeader}s (kind,
 * detail, operation sequence, length) precede every all-reduce stream, push, result frame, barrier,
 * broadcast and error report, so workers that run different operations fail with a
 * {@link io.switchml.api.MismatchedOperationException} instead of mixing data.
 */
package io.switchml.collectives;
