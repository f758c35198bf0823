/**
 * The control plane's protocols as both ends see them (docs/ARCHITECTURE.md sections 1 and 4): the generated
 * gRPC code of {@code switchml_control.proto} (this project's controller) and {@code switchml.proto} (SwitchML's
 * session protocol), {@link io.switchml.control.ControllerAddress}, {@link io.switchml.control.ControllerCredentials},
 * {@link io.switchml.control.JobNames} (the one job-name rule) and {@link io.switchml.control.ControlChannel}, the
 * channel workers and {@code switchml ctl} call the controller through. A new control call starts in the proto.
 */
package io.switchml.control;
