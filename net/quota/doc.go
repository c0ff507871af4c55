// Package quota is client quota accounting as Apache Kafka does it
// (ClientQuotaManager, ClientRequestQuotaManager, QuotaUtils; KIP-13,
// KIP-124, KIP-219): for each quota type (produce bytes, fetch bytes,
// request time) a rate per client, measured over quota.window.num samples
// of quota.window.size.seconds, compared with the quota that applies to
// the client by Kafka's precedence of entities, and the throttle time that
// brings the rate back to the quota.
//
// # Contract
//
//   - Rate is pure (the clock is an argument): Kafka's SampledStat and
//     Rate. A sample starts at the first value recorded after the last
//     one ended; up to samples+1 samples are kept, and a sample whose last
//     value is samples*window old is dropped; the rate is the sum over the
//     samples divided by the time since the oldest one began, stretched to
//     at least (samples-1) windows so a new client's first burst does not
//     read as an enormous rate. A client that always has data ready is
//     let through in bursts of up to (samples-1) windows' worth, each time
//     the sample holding the last burst is dropped: its long-run rate is
//     the quota, its rate over a few windows swings around it (Kafka's
//     too).
//   - Resolve picks the quota of a (user, client-id) by Kafka's precedence,
//     most specific first: user+client-id, user+default client-id, user,
//     default user+client-id, default user+default client-id, default
//     user, client-id, default client-id. It also names the sensor the
//     value is recorded in: the clients sharing a quota entity share it
//     (all of a user's clients share a user quota).
//   - Throttle time: a rate O over a quota T measured over a window W
//     needs a delay X with O*W/(W+X) = T, so X = (O-T)/T*W (QuotaUtils).
//     A Manager may bound it (the request quota bounds it by one window).
//   - A Manager is safe for concurrent use. With no quota of its type set,
//     Record costs one atomic load and records nothing, as Kafka records
//     nothing while quotas are disabled.
package quota
