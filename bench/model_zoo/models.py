"""The corpus models that torchvision does not have, written the way people
write them: masks and positions built in forward, tied weights, nn.LSTM,
skip connections by torch.cat. corpus.py builds them at its two sizes."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Seq2Seq(nn.Module):
    """nn.Transformer encoder-decoder over token embeddings, causal target mask."""

    def __init__(self, vocab, dim, heads, layers, ffn, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.transformer = nn.Transformer(dim, heads, layers, layers, ffn, dropout=dropout,
                                          batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, src, tgt):
        mask = self.transformer.generate_square_subsequent_mask(tgt.shape[1])
        h = self.transformer(self.embed(src), self.embed(tgt), tgt_mask=mask)
        return self.out(h)


class DecoderLM(nn.Module):
    """nn.TransformerDecoder attending to a given memory, causal (bool) mask."""

    def __init__(self, vocab, dim, heads, layers, ffn, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerDecoderLayer(dim, heads, ffn, dropout=dropout, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, layers)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tgt, memory):
        t = tgt.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        return self.out(self.decoder(self.embed(tgt), memory, tgt_mask=mask))


class GPTBlock(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.proj = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, h, mask):
        x = self.ln1(h)
        a, _ = self.attn(x, x, x, attn_mask=mask, need_weights=False)
        h = h + a
        return h + self.drop(self.proj(F.gelu(self.fc(self.ln2(h)), approximate="tanh")))


class GPT(nn.Module):
    """GPT-style decoder: learned positions from torch.arange, an additive
    -inf causal mask from torch.triu(torch.full(...)), and the output
    projection tied to the token embedding."""

    def __init__(self, vocab, dim, heads, layers, seq, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(GPTBlock(dim, heads, dropout) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        h = self.drop(self.tok(idx) + self.pos(pos))
        for block in self.blocks:
            h = block(h, mask)
        return self.head(self.ln(h))


class LSTMClassifier(nn.Module):
    """Embedding, a 2-layer nn.LSTM, a linear head on the last time step."""

    def __init__(self, vocab, dim, hidden, classes, layers=2, dropout=0.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=layers, batch_first=True, dropout=dropout)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.lstm(self.embed(x))
        return self.fc(out[:, -1])


def _conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


class UNet(nn.Module):
    """Three-level UNet for per-pixel classes: max/avg pooling down, nearest
    and bilinear upsampling up, skip connections by torch.cat."""

    def __init__(self, width, classes):
        super().__init__()
        c = width
        self.down1 = _conv_block(3, c)
        self.down2 = _conv_block(c, 2 * c)
        self.bottom = _conv_block(2 * c, 4 * c)
        self.up2 = _conv_block(4 * c + 2 * c, 2 * c)
        self.up1 = _conv_block(2 * c + c, c)
        self.head = nn.Conv2d(c, classes, 1)

    def forward(self, x):
        a = self.down1(x)
        b = self.down2(F.max_pool2d(a, 2))
        c = self.bottom(F.avg_pool2d(b, 2))
        u = self.up2(torch.cat([F.interpolate(c, scale_factor=2, mode="nearest"), b], 1))
        u = F.interpolate(u, scale_factor=2, mode="bilinear", align_corners=False)
        return self.head(self.up1(torch.cat([u, a], 1)))
