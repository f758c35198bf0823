package io.switchml.controller;

import io.grpc.stub.StreamObserver;
import io.switchml.controller.compat.proto.BarrierRequest;
import io.switchml.controller.compat.proto.BarrierResponse;
import io.switchml.controller.compat.proto.BroadcastRequest;
import io.switchml.controller.compat.proto.BroadcastResponse;
import io.switchml.controller.compat.proto.SyncGrpc;

/** The gRPC face of SwitchML's barrier and broadcast: turns calls into {@link SwitchmlSync} calls and back. */
final class SwitchmlSyncService extends SyncGrpc.SyncImplBase {
    private final SwitchmlSync sync;

    SwitchmlSyncService(SwitchmlSync sync) {
        this.sync = sync;
    }

    @Override
    public void barrier(BarrierRequest request, StreamObserver<BarrierResponse> observer) {
        ControllerService.onCancel(observer, sync.barrier(request.getNumWorkers(),
                ControllerService.reply(observer, v -> BarrierResponse.getDefaultInstance())));
    }

    @Override
    public void broadcast(BroadcastRequest request, StreamObserver<BroadcastResponse> observer) {
        ControllerService.onCancel(observer, sync.broadcast(request.getValue(), request.getRank(), request.getNumWorkers(),
                request.getRoot(), ControllerService.reply(observer, v -> BroadcastResponse.newBuilder().setValue(v).build())));
    }
}
