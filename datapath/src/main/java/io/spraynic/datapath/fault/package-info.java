/**
 * What the poll loops share to survive their inputs: {@link io.spraynic.datapath.fault.FaultLog}, the
 * rate-limited report of an unexpected exception that a loop caught, counted and went on after.
 */
package io.spraynic.datapath.fault;
