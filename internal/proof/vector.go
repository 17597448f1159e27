package proof

// Vector is a fixed set of inputs and the values the proof functions give for them.
type Vector struct {
	Secret, Code, ClientNonce, ServerNonce, Addr, Addr6                  string
	ServerProof, Credential, PairServerProof6, PairCredential, PairingID string
}

// TestVector is the fixed test vector that both this package (TestFixedVector) and
// chrome-extension/auth.js (the e2e test TestAuthJSMatchesGoVector) must reproduce. The values
// were checked independently with Python's hmac module.
func TestVector() Vector {
	return Vector{
		Secret:           "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		Code:             "fedcba9876543210fedcba9876543210",
		ClientNonce:      "00112233445566778899aabbccddeeff",
		ServerNonce:      "1700000000.ffeeddccbbaa99887766554433221100",
		Addr:             "127.0.0.1:18792",
		Addr6:            "[::1]:18792",
		ServerProof:      "59c9e3a2e6c54695131a12bdf045633e9e0478e817bc1fa49e487b1655b6c1b3",
		Credential:       "tr1.1700000000.ffeeddccbbaa99887766554433221100.00112233445566778899aabbccddeeff.18d732592404609107baadba085f73a77c95dda8770c4bcad11e64abd7fc1740",
		PairServerProof6: "f7fdbf338cbbd4c9db6813d404b581eb0dd59130485589e631c8755949dd5cdc",
		PairCredential:   "tr1.1700000000.ffeeddccbbaa99887766554433221100.00112233445566778899aabbccddeeff.69a2e1ed982af22d63baaa643211d175e7fcd6916d750f500658ebd5445d39c4",
		PairingID:        "04f243c16d95d26615f0689c224a3896",
	}
}
