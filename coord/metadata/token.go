package metadata

// DelegationToken creates or updates a delegation token (KIP-48, Kafka's
// DelegationTokenRecord): its owner and who may renew it, when it was
// issued, when it expires (renewals move that) and the latest it may ever
// expire. The token's HMAC is not stored: every broker derives it from the
// token id with delegation.token.secret.key. Principals are Kafka's
// "Type:name".
type DelegationToken struct {
	TokenID   string
	Owner     string
	Requester string
	Renewers  []string
	Issued    int64 // ms since the epoch
	Expiry    int64
	MaxExpiry int64
}

// RemoveDelegationToken deletes a token: expired, or expired by request
// (Kafka's RemoveDelegationTokenRecord).
type RemoveDelegationToken struct {
	TokenID string
}

func (*DelegationToken) Type() RecordType       { return TypeDelegationToken }
func (*RemoveDelegationToken) Type() RecordType { return TypeRemoveDelegationToken }

func (r *DelegationToken) appendFields(b []byte) []byte {
	b = appendString(b, r.TokenID)
	b = appendString(b, r.Owner)
	b = appendString(b, r.Requester)
	b = appendUvarint(b, uint64(len(r.Renewers)))
	for _, p := range r.Renewers {
		b = appendString(b, p)
	}
	b = appendVarint(b, r.Issued)
	b = appendVarint(b, r.Expiry)
	return appendVarint(b, r.MaxExpiry)
}

func (r *RemoveDelegationToken) appendFields(b []byte) []byte { return appendString(b, r.TokenID) }

func decodeDelegationToken(r *reader) *DelegationToken {
	t := &DelegationToken{TokenID: r.string(), Owner: r.string(), Requester: r.string()}
	if n := r.count(); n > 0 {
		t.Renewers = make([]string, n)
		for i := range t.Renewers {
			t.Renewers[i] = r.string()
		}
	}
	t.Issued, t.Expiry, t.MaxExpiry = r.varint(), r.varint(), r.varint()
	return t
}

// valid reports whether the token's fields hold together.
func (r *DelegationToken) valid() bool {
	return r.TokenID != "" && r.Owner != "" && r.Issued <= r.Expiry && r.Expiry <= r.MaxExpiry
}

// DelegationToken returns a token by id.
func (img *Image) DelegationToken(id string) (DelegationToken, bool) {
	t, ok := img.tokens[id]
	return t, ok
}

// DelegationTokens returns every token. Read only.
func (img *Image) DelegationTokens() map[string]DelegationToken { return img.tokens }
