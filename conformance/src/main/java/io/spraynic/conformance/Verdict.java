package io.spraynic.conformance;

/** The outcome of one check. */
public enum Verdict
{
    PASS, FAIL, NOT_TESTED
}
