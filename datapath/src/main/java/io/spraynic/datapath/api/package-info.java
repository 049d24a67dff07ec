/**
 * The application's view of a SprayNIC, the same whether the NIC runs in the application's process
 * ({@link io.spraynic.datapath.nic.EmbeddedNic}) or in another one, reached through shared memory
 * ({@link io.spraynic.datapath.nic.ipc.NicClient}): a {@link io.spraynic.datapath.api.Nic} registers memory and opens
 * {@link io.spraynic.datapath.api.Connection}s (spray, or RoCEv2 RC queue pairs), on which the application posts
 * {@link io.spraynic.datapath.api.SendRequest}s and {@link io.spraynic.datapath.api.ReceiveRequest}s and polls
 * {@link io.spraynic.datapath.api.CompletionQueue}s, as with ibverbs.
 * <p>
 * Work requests name local memory by lkey and virtual address ({@code ibv_sge}), never by a Java object, so one
 * request means the same in either placement and crosses a process boundary as it is. Posting and polling never
 * block, allocate or throw: a post answers a {@link io.spraynic.datapath.verbs.PostResult}, and a request the NIC
 * refuses later (an lkey that names nothing of this application's, memory outside the region) completes with an
 * error status. Control calls (register, connect, close) may block, allocate and throw.
 * <p>
 * The value types these interfaces share with the NIC live here too ({@link io.spraynic.datapath.api.Connection.Kind},
 * {@link io.spraynic.datapath.api.RocevEndpoint}, {@link io.spraynic.datapath.api.DrainReport}), so this package
 * depends on no NIC's; the completion holder ({@link io.spraynic.datapath.verbs.WorkCompletion}) is the verbs layer's.
 */
package io.spraynic.datapath.api;
