package core

// Word classes of the extractive summarizer (bits).
const (
	cwSocial uint32 = 1 << iota // greetings, thanks, acknowledgements, reactions
	cwStop                      // glue words: no content of their own
	cwDecision
	cwError
	cwConstraint
	cwRationale
	cwAction // plans and pending work
	cwPref   // preferences
	cwTime   // days, months, relative times
	cwWe     // "we"
	cwWill   // "will"
	cwShould // "should", "do", "does", "must"
	cwNot    // "not"
	cwLets   // "let's", "lets"
	cwGo     // "go", "going"
	cwWith   // "with"
	cwTo     // "to"
	cwSounds // "sounds", "looks"
	cwGood   // "good", "great", "fine"
	cwRoot   // "root"
	cwCause  // "cause"
	cwAt     // "at", "no"
	cwMostLeas
)

// exWordClass is the small lexicon of the extractive summarizer, for
// lower-cased ASCII words. A word of no class (0) of three letters or more
// is a content word. Phrase parts ("we", "will", "should", "not", …) are
// glue on their own so that "ok, we will see" is not mistaken for content,
// but they form a decision, constraint or plan together (see
// extractor.word).
func exWordClass(w string) uint32 {
	switch w {
	// decisions
	case "decided", "decide", "decides", "decision", "decisions", "agreed", "agree", "agreement",
		"chose", "chosen", "settled", "approved", "approve", "finalized", "finalised", "confirmed", "we'll":
		return cwDecision
	// errors, failures, bugs, fixes
	case "error", "errors", "fail", "fails", "failed", "failing", "failure", "failures",
		"bug", "bugs", "fix", "fixed", "fixes", "fixing", "hotfix", "crash", "crashed", "crashes",
		"crashing", "exception", "exceptions", "panic", "panicked", "traceback", "timeout", "timeouts",
		"refused", "broken", "regression", "outage", "incident", "denied", "invalid", "leak", "leaks",
		"deadlock", "corrupted", "corruption", "workaround", "patch", "patched", "rollback", "fatal",
		"unavailable", "rejected", "declined", "overflow", "mismatch", "missing", "wrong":
		return cwError
	// constraints, requirements, policies
	case "must", "mustn't":
		return cwConstraint | cwShould
	case "never", "always", "required", "require", "requires", "requirement", "requirements",
		"deadline", "deadlines", "budget", "budgets", "constraint", "constraints", "mandatory",
		"cannot", "can't", "shouldn't", "don't", "limit", "limits", "maximum", "minimum",
		"policy", "policies", "only", "forbidden", "compliance", "sla",
		"cap", "capped", "eligible", "ineligible", "due", "allergic", "allergy":
		return cwConstraint
	// preferences
	case "prefer", "prefers", "preferred", "preference", "favorite", "favourite", "favorites",
		"favourites", "enjoy", "enjoys", "enjoyed", "hate", "hates", "hated", "dislike", "dislikes",
		"passion", "passionate", "hobby", "hobbies":
		return cwPref
	case "love", "loved", "loves", "like", "likes", "liked":
		return cwPref | cwStop
	// rationale
	case "because", "reason", "reasons", "therefore", "rationale", "caused", "causes", "why":
		return cwRationale
	case "cause":
		return cwRationale | cwCause
	// plans and pending work
	case "todo", "pending", "blocked", "blocker", "blockers", "remaining", "unresolved", "follow-up",
		"followup", "escalate", "escalated", "escalation", "planned", "milestone", "plan", "plans",
		"planning", "schedule", "scheduled", "intend", "intends", "goal", "goals":
		return cwAction
	// times
	case "today", "yesterday", "tomorrow", "tonight", "weekend", "weekends", "week", "weeks",
		"month", "months", "year", "years", "ago", "recently", "lately", "soon", "morning",
		"afternoon", "evening", "night", "summer", "winter", "spring", "autumn", "fall",
		"january", "february", "march", "april", "june", "july", "august", "september",
		"october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
		"saturday", "sunday":
		return cwTime
	// phrase parts
	case "we":
		return cwStop | cwWe
	case "will":
		return cwStop | cwWill
	case "should", "do", "does":
		return cwStop | cwShould
	case "not":
		return cwStop | cwNot
	case "let's", "lets":
		return cwStop | cwLets
	case "go", "going":
		return cwStop | cwGo
	case "with":
		return cwStop | cwWith
	case "to":
		return cwStop | cwTo
	case "sounds", "looks":
		return cwSocial | cwSounds
	case "good", "great", "fine":
		return cwSocial | cwGood
	case "root":
		return cwRoot
	case "at", "no":
		return cwStop | cwAt
	case "most", "least", "later":
		return cwStop | cwMostLeas
	// greetings, thanks, acknowledgements, reactions
	case "thanks", "thank", "thx", "ty", "ok", "okay", "cool", "nice", "awesome", "perfect",
		"sure", "yes", "yeah", "yep", "yup", "nope", "hi", "hello", "hey", "bye", "goodbye",
		"cheers", "welcome", "np", "lol", "alright", "appreciate", "appreciated", "wonderful",
		"fantastic", "excellent", "noted", "understood", "absolutely", "definitely", "please",
		"hmm", "oh", "ah", "sorry", "glad", "happy", "wow", "hah", "haha", "amazing", "congrats",
		"congratulations", "pleasure", "anytime", "gotcha", "roger", "ack", "hiya", "greetings",
		"exciting", "excited", "cute", "sweet", "lovely", "incredible", "impressive", "proud",
		"omg", "yay", "whoa", "neat", "brilliant", "totally", "exactly", "true",
		"interesting", "fun", "care", "luck", "hope", "hoping", "miss", "missed", "bless":
		return cwSocial
	// glue words
	case "a", "an", "the", "and", "or", "but", "so", "of", "in", "on", "for", "from", "by", "as",
		"is", "are", "was", "were", "be", "been", "being", "am", "have", "has", "had", "having",
		"did", "done", "doing", "it", "its", "it's", "that", "that's", "this", "these", "those",
		"there", "there's", "here", "what", "what's", "how", "how's", "when", "where", "who",
		"which", "whose", "whom", "you", "your", "yours", "you're", "you've", "you'll", "you'd",
		"i", "i'm", "i've", "i'll", "i'd", "me", "my", "mine", "myself", "we're", "we've", "our",
		"us", "they", "them", "their", "they're", "he", "she", "him", "her", "his", "hers",
		"also", "just", "really", "very", "too", "quite", "pretty", "much", "many", "lot", "lots",
		"some", "any", "more", "all", "every", "each", "other", "another", "such", "same", "own",
		"about", "into", "over", "than", "then", "now", "again", "still", "even", "ever", "yet",
		"can", "could", "would", "shall", "might", "get", "got", "gets", "getting",
		"make", "made", "makes", "let", "come", "came", "know", "knew", "think", "thought",
		"feel", "feeling", "felt", "say", "said", "says", "tell", "told", "see", "seen", "saw",
		"look", "looking", "want", "wanted", "wants", "thing", "things", "stuff", "kind", "sort",
		"way", "one", "ones", "something", "anything", "everything", "nothing", "someone",
		"anyone", "everyone", "well", "um", "uh", "new", "bit", "actually", "probably", "maybe",
		"though", "although", "since", "while", "if", "whether", "doesn't", "didn't", "isn't",
		"aren't", "wasn't", "weren't", "won't", "it'll", "that'll", "haven't", "hasn't", "sense",
		"means", "mean", "went", "take", "talk", "time", "times", "day", "days", "last",
		"next", "back", "there'd", "what'll", "who's", "where's", "right", "anyway", "quick", "life", "up", "out", "off", "down",
		"guess", "yourself", "sir",
		"ma'am", "bro", "folks", "team", "guys", "buddy", "friend", "dear", "ready",
		"wait", "hear", "heard", "check", "moment", "sec", "second", "help", "helping", "helpful",
		"keep", "keeping", "happen", "happened", "happening", "try", "trying", "tried":
		return cwStop
	}
	return 0
}
