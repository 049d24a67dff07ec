/**
 * A hand-written facade over the jextract-generated DPDK bindings in
 * {@link io.spraynic.dpdk.generated}: EAL lifecycle ({@link io.spraynic.dpdk.Eal}), mempools
 * ({@link io.spraynic.dpdk.Mempool}), ports ({@link io.spraynic.dpdk.EthPort}), burst arrays
 * ({@link io.spraynic.dpdk.MbufBurst}) and the allocation-free mbuf flyweight
 * ({@link io.spraynic.dpdk.Mbuf}).
 * <p>
 * Control-path calls go through the generated bindings and throw {@link io.spraynic.dpdk.DpdkException}
 * carrying DPDK's own message. Fast-path calls go through {@link io.spraynic.dpdk.Shim}, which
 * binds the C shim's burst functions as critical downcalls over raw addresses.
 */
package io.spraynic.dpdk;
