/**
 * The verbs model both SprayNIC transports serve, after ibverbs: protection domains and memory regions over
 * off-heap {@link java.lang.foreign.MemorySegment}s with unguessable keys and access rights; queue pairs
 * with the InfiniBand state machine; work requests posted into preallocated queues; completion queues
 * polled into reusable {@link io.spraynic.datapath.verbs.WorkCompletion}s. Status codes, opcodes, states
 * and access flags carry the ibverbs values.
 * <p>
 * Control-path calls (register, create, modify) may allocate and throw; posting, polling and the
 * {@link io.spraynic.datapath.verbs.ProtectionDomain#checkRemoteAccess remote access check} neither allocate
 * nor throw.
 */
package io.spraynic.datapath.verbs;
