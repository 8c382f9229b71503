/**
 * C2SP signed-note example, as data. Source: the package documentation of golang.org/x/mod/sumdb/note
 * (the "PeterNeumann" verifier key and signed note), which the C2SP signed-note specification follows.
 */

export const VERIFIER_KEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";

export const SIGNED_NOTE =
  "If you think cryptography is the answer to your problem,\n" +
  "then you don't know what your problem is.\n" +
  "\n" +
  "\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
