/**
 * What every all-reduce implements and every caller uses (docs/ARCHITECTURE.md section 1):
 * {@link io.switchml.api.AllReduce}, {@link io.switchml.api.ReduceOp}, the exceptions (rooted at
 * {@link io.switchml.api.SwitchMLException}), the fallback seam ({@link io.switchml.api.FallbackProvider}) and
 * {@link io.switchml.api.ReferenceAllReduce}, the switch path's exact result computed locally.
 */
package io.switchml.api;
