/**
 * The wire-level compliance suite of docs/PROTOCOL.md (S13): {@link io.spraynic.conformance.ConformanceSuite} plays a
 * spray peer over kernel UDP sockets and judges a target only by the frames it sends and the memory it exposes,
 * reporting each check ({@link io.spraynic.conformance.CheckResult}) by the clause identifier it tests. Everything
 * here is written from the document on the JDK alone (codec, ICRC, SipHash-2-4, X25519 and HKDF): it shares no
 * code with the implementation it judges, so a bug both made the same way would have to be made twice.
 */
package io.spraynic.conformance;
