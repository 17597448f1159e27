package gate

import (
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Level is how grave a risky step is: what kind of approval may let it run.
type Level int

const (
	// None is a step with no risk.
	None Level = iota
	// Ordinary is a step whose effect the user's own words can approve: submitting a form,
	// running a script, a generic "go on".
	Ordinary
	// Grave is a step only a person's answer to this very step approves: money, deletion,
	// sending to others, publishing, account changes, secrets and files leaving the machine.
	Grave
)

// String names the level.
func (l Level) String() string {
	switch l {
	case None:
		return "none"
	case Ordinary:
		return "ordinary"
	case Grave:
		return "grave"
	}
	return "level?"
}

// category is one kind of consequential step and its words in English, German, French,
// Spanish, Japanese and Chinese. Latin-script entries match as whole words after folding
// (any letter or digit next to them breaks the match: "Posts" is not "post"); CJK entries
// match anywhere (those scripts have no spaces between words).
type category struct {
	reason string
	level  Level
	latin  []string
	cjk    []string
}

// Reasons the gate gives, one per category.
const (
	ReasonPayment    = "purchase or payment"
	ReasonSending    = "sending"
	ReasonDeletion   = "deletion"
	ReasonPublishing = "publishing"
	ReasonAccount    = "account or access change"
	ReasonSubmit     = "submitting data"
	ReasonPassword   = "password field"
	ReasonPayField   = "payment or identity field"
	ReasonUpload     = "uploading a file"
	ReasonScript     = "running a script in the page"
	ReasonConfirm    = "confirming an irreversible step"
)

// actionCategories name controls whose activation is irreversible or consequential.
var actionCategories = []category{
	{ReasonPayment, Grave, []string{
		"buy", "buy now", "purchase", "pay", "pay now", "payment", "checkout", "check out", "place order", "place your order",
		"order now", "complete order", "complete purchase", "confirm order", "confirm purchase", "confirm payment",
		"book now", "reserve", "donate", "subscribe", "upgrade now", "add funds", "top up",
		"kaufen", "jetzt kaufen", "bestellen", "jetzt bestellen", "zahlungspflichtig bestellen", "bezahlen", "zahlen", "kaufabschluss", "abonnieren", "spenden",
		"acheter", "payer", "commander", "passer la commande", "valider la commande", "régler", "s'abonner", "abonner",
		"comprar", "pagar", "realizar pedido", "hacer pedido", "finalizar compra", "tramitar pedido", "suscribirse", "suscribir", "donar",
	}, []string{"購入", "注文", "支払", "決済", "购买", "支付", "付款", "下单", "结账", "結帳", "订阅", "購読"}},
	{ReasonSending, Grave, []string{
		"send", "send money", "transfer", "wire", "wire money", "confirm transfer", "ship", "ship it", "ship now", "dispatch",
		"senden", "absenden", "überweisen", "überweisung", "versenden", "verschicken",
		"envoyer", "virement", "transférer", "expédier",
		"enviar", "transferir", "transferencia", "despachar",
	}, []string{"送信", "送金", "振込", "振り込", "発送", "发送", "转账", "汇款", "发货"}},
	{ReasonDeletion, Grave, []string{
		"delete", "remove", "erase", "destroy", "close account", "deactivate", "unsubscribe", "wipe", "purge",
		"empty trash", "empty the trash", "empty bin", "empty the bin", "empty recycle bin", "empty folder", "empty inbox", "empty spam", "empty cart",
		"cancel subscription", "cancel my subscription", "cancel your subscription", "cancel the subscription",
		"cancel membership", "cancel my membership", "cancel order", "cancel my order", "cancel the order",
		"cancel plan", "cancel my plan", "cancel account", "cancel my account", "cancel booking", "cancel reservation",
		"cancel flight", "cancel payment", "cancel contract", "terminate", "revoke",
		"löschen", "entfernen", "konto schließen", "kündigen", "abbestellen", "stornieren", "leeren", "papierkorb leeren", "abmelden",
		"supprimer", "effacer", "résilier", "désabonner", "se désabonner", "vider", "vider la corbeille", "annuler l'abonnement", "annuler la commande",
		"eliminar", "borrar", "suprimir", "cancelar suscripción", "cancelar la suscripción", "cancelar pedido", "cancelar el pedido", "darse de baja", "dar de baja", "vaciar", "vaciar papelera", "anular",
	}, []string{"削除", "消去", "退会", "解約", "配信停止", "空にする", "删除", "移除", "注销", "退订", "取消订阅", "清空"}},
	{ReasonPublishing, Grave, []string{
		"publish", "post", "tweet", "share", "deploy", "release to production", "go live", "merge", "make public",
		"veröffentlichen", "posten", "bereitstellen", "teilen",
		"publier", "déployer", "partager",
		"publicar", "desplegar", "compartir",
	}, []string{"公開", "投稿", "デプロイ", "发布", "发表", "部署", "分享"}},
	{ReasonAccount, Grave, []string{
		"approve", "authorize", "authorise", "grant access", "allow access", "sign and", "change password", "reset password",
		"change email", "transfer ownership", "make admin", "add admin",
		"genehmigen", "autorisieren", "freigeben", "passwort ändern",
		"autoriser", "approuver", "changer le mot de passe",
		"autorizar", "aprobar", "cambiar contraseña",
	}, []string{"承認", "授权", "批准", "パスワード変更", "修改密码"}},
	{ReasonSubmit, Ordinary, []string{
		"submit", "soumettre", "einreichen", "enviar formulario",
	}, []string{"提交", "送出"}},
}

// proceedLabels are generic "go on" labels: harmless alone, but they carry out whatever the
// page around them proposes, so in a risky context (see contextCategories) they ask too.
var proceedLabels = []string{
	"continue", "next", "proceed", "ok", "okay", "yes", "accept", "agree", "i agree", "done", "finish", "complete", "confirm",
	"i understand", "got it", "continue to payment", "apply",
	"weiter", "fortfahren", "ja", "akzeptieren", "fertig", "abschließen", "bestätigen", "anwenden",
	"continuer", "suivant", "valider", "oui", "accepter", "terminer", "confirmer", "appliquer",
	"continuar", "siguiente", "aceptar", "sí", "listo", "finalizar", "confirmar", "aplicar",
	"続ける", "次へ", "確認", "確定", "はい", "同意", "完了", "继续", "下一步", "确定", "确认", "是", "完成",
}

// contextCategories are what the page's own words around a control may say: the action
// categories, amounts of money and warnings that a step cannot be undone.
var contextCategories = append(append([]category(nil), actionCategories[:5]...),
	category{ReasonPayment, Grave, []string{"order", "checkout", "card number", "credit card", "debit card", "your card", "amount", "total", "price", "subscription", "billing",
		"bestellung", "gesamt", "betrag", "abonnement", "commande", "montant", "pedido", "importe", "tarjeta", "suscripción"},
		[]string{"金額", "合計", "金额", "总计", "订单"}},
	category{ReasonDeletion, Grave, []string{"cannot be undone", "can't be undone", "can not be undone", "irreversible", "permanently",
		"unwiderruflich", "endgültig", "kann nicht rückgängig gemacht werden", "irréversible", "définitivement",
		"definitivamente", "no se puede deshacer"}, []string{"元に戻せません", "取り消せません", "无法撤销", "不可撤销", "无法恢复"}},
)

// confirmPhrases in a confirm() or prompt() message ask before OK is pressed.
var confirmPhrases = category{ReasonConfirm, Grave, []string{"are you sure", "cannot be undone", "can't be undone",
	"irreversible", "permanently", "sind sie sicher", "êtes-vous sûr", "êtes-vous sûre", "estás seguro", "está seguro"},
	[]string{"よろしいですか", "本当に", "确定要", "确定吗", "是否确定"}}

// amountRe finds an amount of money: "$500", "€ 39,00", "39.00 EUR", "500 USD", "¥1,000", "1000円".
var amountRe = regexp.MustCompile(`(?i)(?:[$€£¥₹]\s?\d|\d[\d.,' ]*\s?(?:€|\$|£|¥|₹|円|元|\b(?:usd|eur|gbp|chf|jpy|cny|cad|aud|dollars?|euros?)\b))`)

// compile builds one regexp per category: Latin words between non-letters, CJK anywhere.
func (c category) compile() *regexp.Regexp {
	var alts []string
	if len(c.latin) > 0 {
		ws := make([]string, len(c.latin))
		for i, w := range c.latin {
			ws[i] = strings.ReplaceAll(regexp.QuoteMeta(Fold(w)), " ", `\s+`)
		}
		alts = append(alts, `(?:^|[^\p{L}\p{N}])(`+strings.Join(ws, "|")+`)(?:$|[^\p{L}\p{N}])`)
	}
	if len(c.cjk) > 0 {
		ws := make([]string, len(c.cjk))
		for i, w := range c.cjk {
			ws[i] = regexp.QuoteMeta(Fold(w))
		}
		alts = append(alts, "("+strings.Join(ws, "|")+")")
	}
	return regexp.MustCompile(`(?i)` + strings.Join(alts, "|"))
}

type compiled struct {
	reason string
	level  Level
	re     *regexp.Regexp
}

// vocabulary is the compiled vocabulary (read-only after it is built).
type vocabulary struct {
	action  []compiled
	context []compiled
	proceed *regexp.Regexp // a whole label: the proceed word, then at most a short tail
	confirm *regexp.Regexp
}

func buildVocabulary() *vocabulary {
	ws := make([]string, len(proceedLabels))
	for i, w := range proceedLabels {
		ws[i] = strings.ReplaceAll(regexp.QuoteMeta(Fold(w)), " ", `\s+`)
	}
	v := &vocabulary{confirm: confirmPhrases.compile(),
		proceed: regexp.MustCompile(`(?i)^(?:` + strings.Join(ws, "|") + `)(?:[\s,!.:;–—>→-]+.{0,30})?$`)}
	for _, c := range actionCategories {
		v.action = append(v.action, compiled{c.reason, c.level, c.compile()})
	}
	for _, c := range contextCategories {
		v.context = append(v.context, compiled{c.reason, c.level, c.compile()})
	}
	return v
}

// firstMatch returns the matched word of re in s ("" if none).
func firstMatch(re *regexp.Regexp, s string) string {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	for _, g := range m[1:] {
		if g != "" {
			return g
		}
	}
	return strings.TrimSpace(m[0])
}

// hit is what made a text risky: its category, level and the words.
type hit struct {
	reason string
	level  Level
	word   string
}

// actionHit judges a control's label (already folded): the category its words name. With
// money, an amount in a short label ("$500", "39,00 €") is a purchase too (a button's, not a
// product link's).
func (v *vocabulary) actionHit(label string, money bool) hit {
	var best hit
	for _, c := range v.action {
		if w := firstMatch(c.re, label); w != "" && c.level > best.level {
			best = hit{c.reason, c.level, w}
		}
	}
	if best.level < Grave && money && len([]rune(label)) <= 40 {
		if m := amountRe.FindString(label); m != "" {
			return hit{ReasonPayment, Grave, strings.TrimSpace(m)}
		}
	}
	return best
}

// contextHit judges page text around a control (folded).
func (v *vocabulary) contextHit(text string) hit {
	for _, c := range v.context {
		if w := firstMatch(c.re, text); w != "" {
			return hit{c.reason, c.level, w}
		}
	}
	if m := amountRe.FindString(text); m != "" {
		return hit{ReasonPayment, Grave, strings.TrimSpace(m)}
	}
	return hit{}
}

// isProceed reports whether a folded label is a generic "go on" label (Continue, OK, Weiter,
// 次へ…), alone or with a short tail ("Continue →", "OK, got it", "Next: shipping").
func (v *vocabulary) isProceed(label string) bool {
	n := strings.TrimFunc(label, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return n != "" && v.proceed.MatchString(n)
}

// Fold prepares text for matching as a person reads it: Unicode NFKC (full-width Ｂｕｙ is
// Buy, ligatures split), invisible characters removed (zero-width spaces and joiners, soft
// hyphens, bidi marks, variation selectors), letters that look like Latin ones (Cyrillic е,
// Greek ο…) mapped to them, whitespace collapsed and everything lower-cased.
func Fold(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if invisible(r) {
			continue
		}
		if l, ok := confusables[r]; ok {
			r = l
		}
		if unicode.IsSpace(r) {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimRight(b.String(), " ")
}

// invisible reports whether r draws nothing a reader would see between letters.
func invisible(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5, r == 0x180E,
		r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F, r == 0x3164, r == 0xFEFF,
		r == 0xFFA0, r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0000 && r <= 0xE0FFF, r >= 0x1D173 && r <= 0x1D17A:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// confusables map letters of other scripts that look like Latin letters to those letters
// (after NFKC, so full-width and mathematical letters are already Latin).
var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x',
	'ѕ': 's', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ԁ': 'd', 'һ': 'h', 'ԛ': 'q', 'ԝ': 'w', 'ү': 'y', 'ɡ': 'g', 'ӏ': 'l', 'ḷ': 'l',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T', 'У': 'Y', 'Х': 'X',
	'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'Ԁ': 'D', 'Һ': 'H', 'Ү': 'Y', 'Ԝ': 'W', 'Ӏ': 'l',
	// Greek
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ν': 'v', 'τ': 't', 'ι': 'i', 'κ': 'k', 'υ': 'u', 'χ': 'x', 'ε': 'e', 'η': 'n',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	// Armenian and others often used as look-alikes
	'օ': 'o', 'ս': 'u', 'ց': 'g', 'ո': 'n', 'հ': 'h', 'զ': 'q',
	// Latin variants NFKC keeps
	'ı': 'i', 'ȷ': 'j', 'ʏ': 'y', 'ɑ': 'a', 'ℓ': 'l', 'ꓐ': 'B', 'ꓑ': 'P', 'ꓒ': 'p', 'ꓔ': 'T', 'ꓗ': 'K', 'ꓚ': 'C', 'ꓜ': 'Z', 'ꓝ': 'F', 'ꓞ': 'F', 'ꓟ': 'M', 'ꓠ': 'N', 'ꓡ': 'L', 'ꓢ': 'S', 'ꓣ': 'R', 'ꓤ': 'R', 'ꓦ': 'V', 'ꓧ': 'H', 'ꓪ': 'W', 'ꓫ': 'X', 'ꓬ': 'Y', 'ꓮ': 'A', 'ꓯ': 'A', 'ꓰ': 'E', 'ꓱ': 'E', 'ꓲ': 'I', 'ꓳ': 'O', 'ꓴ': 'U',
}
