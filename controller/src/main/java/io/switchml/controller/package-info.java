/**
 * The control plane (docs/ARCHITECTURE.md sections 4, 5 and 9): {@link io.switchml.controller.AggregationService}
 * starts a switch with its controller; {@code JobRegistry} owns the job tables on one thread
 * ({@code ControllerAgent}), {@code JobFormation} checks and installs joins (admission, tenants' shares),
 * {@code JobLiveness} watches ranks and aborts jobs, {@code JobMeetings} runs barriers and broadcasts;
 * SwitchML's session protocol ({@code SwitchmlSessions}); security ({@link io.switchml.controller.ControllerSecurity},
 * the authenticator, protected mode, the limiters, {@code JobLog}) and metrics ({@code SwitchMetrics}).
 */
package io.switchml.controller;
